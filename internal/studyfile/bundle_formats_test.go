package studyfile

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// An odd-one-out and a rank:4:2 study travel in their bundles (issue 27):
// the imported study has the same format, the same trials (each
// question's key and items in display order, each answer's choices in
// order and first derived triplet, design and response time), the same
// votes of the derived triplets, and the same trials.csv.
func TestBundleKeepsTrials(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	collect.RegisterDesigns(s)
	ctx := context.Background()
	for _, format := range []string{"odd-one-out", "rank:4:2"} {
		slug := strings.ReplaceAll(format, ":", "-")
		st, err := s.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: format, QuestionsPerParticipant: 6,
			Status: study.StatusOpen, Design: study.DesignRandom, Format: format, HeldoutShare: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:8]); err != nil || len(rej) > 0 {
			t.Fatal(rej, err)
		}
		answered := 0
		for range 4 {
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			for {
				pr, err := s.Next(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if pr.Done {
					break
				}
				q := pr.Question
				ms := 700 + answered
				// Vary the choices: not always the first option shown.
				var choices []int
				for i := range q.Choose {
					choices = append(choices, q.Options[(answered+i)%len(q.Options)].Index)
				}
				if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: choices, ResponseMS: &ms}); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				answered++
			}
		}
		if err := s.RecordPending(ctx); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		again, rep, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: slug + "-again"}, BundleLimits{})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if again.Format != format || rep.Answers != answered || answered != 24 {
			t.Fatalf("%s: imported format %q, %d answers; want %d", format, again.Format, rep.Answers, answered)
		}
		a, b := trialRows(t, pool, st.ID), trialRows(t, pool, again.ID)
		if len(a) != answered || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: trials\n%v\nimported\n%v", format, a, b)
		}
		heldout := 0
		for _, r := range a {
			if strings.Contains(r, "heldout") {
				heldout++
			}
		}
		if heldout == 0 || heldout == answered {
			t.Fatalf("%s: %d of %d trials held out; the test wants both kinds", format, heldout, answered)
		}
		va, vb := voteRows(t, pool, st.ID), voteRows(t, pool, again.ID)
		if len(va) == 0 || !reflect.DeepEqual(va, vb) {
			t.Fatalf("%s: votes\n%v\nimported\n%v", format, va, vb)
		}
		var ta, tb bytes.Buffer
		if err := s.ExportTrialsCSV(ctx, st.ID, &ta, true); err != nil {
			t.Fatal(err)
		}
		if err := s.ExportTrialsCSV(ctx, again.ID, &tb, true); err != nil {
			t.Fatal(err)
		}
		if ta.String() != tb.String() || strings.Count(ta.String(), "\n") != answered+1 {
			t.Fatalf("%s: trials.csv\n%s\nimported\n%s", format, ta.String(), tb.String())
		}
	}
}

// trialRows are a study's answered trials in answer order, without the
// ids the import renews.
func trialRows(t *testing.T, pool *pgxpool.Pool, studyID int64) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT format('%s %s %s %s | %s %s %s %s | %s %s %s %s', q.anchor, q.left_idx, q.right_idx, q.options,
			a.anchor, a.closer, a.farther, a.choices, q.design, a.response_ms, q.issued_at, a.answered_at)
		FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 ORDER BY a.answered_at, q.options, a.choices`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func voteRows(t *testing.T, pool *pgxpool.Pool, studyID int64) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT format('%s %s %s %s %s', anchor, j, k, j_closer, k_closer)
		FROM votes WHERE study_id = $1 ORDER BY anchor, j, k`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// trialParts is a version 4 bundle of a study of format with six label
// items, one participant and one answer, whose answers.csv row is row.
func trialParts(format, row string) bundleParts {
	var items strings.Builder
	items.WriteString("index,label,file_name,content_type,sha256,width,height,image\n")
	for i := range 6 {
		fmt.Fprintf(&items, "%d,i%d,i%d,,label-%d,0,0,\n", i, i, i, i)
	}
	return bundleParts{
		manifest: `{"format": "closer-study-bundle", "version": 4, "counts": {"items": 6, "participants": 1, "answers": 1}}`,
		study:    `{"slug": "trials", "title": "Trials", "questions_per_participant": 5, "status": "paused", "design": "random", "format": "` + format + `"}`,
		items:    items.String(),
		participants: "participant,external_id,completion_code,created_at,completed_at,excluded_at,arm\n" +
			"p1,,,2026-01-01T00:00:00Z,,,0\n",
		answers: "question_id,participant,anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at,options,choices\n" +
			"q1,p1," + row + "\n",
	}
}

// Rows of answers.csv after question_id and participant: at is the
// middle, oddOK and rankOK are good trials.
const (
	at = "random,800,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z,"
	// Odd-one-out: items 0 1 2 shown, 2 the odd one; the first derived
	// triplet is (0, 1, 2).
	oddOK = "0,1,2,1,2," + at + "0 1 2,2"
	// rank:4:2: query 0, references 1 2 3 4, 3 then 1 chosen; the first
	// derived triplet is (0, 3, 1).
	rankOK = "0,1,2,3,1," + at + "1 2 3 4,3 1"
)

// Every bad trial row of a bundle is refused with its line and reason,
// and nothing is stored; the good rows they spoil import. The rows are
// anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at,options,choices.
func TestImportBundleRefusesBadTrials(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	cases := []struct {
		name, format, row, reason string
	}{
		{"odd choice not shown", "odd-one-out", "0,1,2,1,2," + at + "0 1 2,3", "choice 3 is not one of the items shown"},
		{"odd two choices", "odd-one-out", "0,1,2,1,2," + at + "0 1 2,2 1", "2 choices: an odd-one-out answer chooses one item"},
		{"odd repeated choice", "odd-one-out", "0,1,2,1,2," + at + "0 1 2,2 2", "2 choices"},
		{"odd no choice", "odd-one-out", "0,1,2,1,2," + at + "0 1 2,", "choices is empty"},
		{"odd two options", "odd-one-out", "0,1,2,1,2," + at + "0 1,1", "options: 2 items, a odd-one-out trial shows 3"},
		{"odd four options", "odd-one-out", "0,1,2,1,2," + at + "0 1 2 3,1", "options: 4 items, more than a trial shows (3)"},
		{"odd repeated option", "odd-one-out", "0,1,2,1,2," + at + "0 1 1,0", "repeats an item"},
		{"odd option not an item", "odd-one-out", "0,1,2,1,2," + at + "0 1 6,0", `options: "6" is not an item index`},
		{"odd option not a number", "odd-one-out", "0,1,2,1,2," + at + "0 x 2,0", `options: "x" is not an item index`},
		{"odd key not its items", "odd-one-out", "3,1,2,1,2," + at + "0 1 2,2", "anchor, left and right must be the trial's three options"},
		{"odd wrong derived triplet", "odd-one-out", "0,1,2,2,1," + at + "0 1 2,2", "closer and farther must be the first triplet the trial derives (1, 2)"},
		{"odd no options column", "odd-one-out", "0,1,2,1,2," + at + ",", "options is empty: the study's answers are trials"},
		{"rank choice not shown", "rank:4:2", "0,1,2,3,1," + at + "1 2 3 4,5 1", "choice 1 (item 5) is not one of the references shown"},
		{"rank repeated choice", "rank:4:2", "0,1,2,3,1," + at + "1 2 3 4,3 3", "item 3 chosen twice"},
		{"rank too few choices", "rank:4:2", "0,1,2,3,1," + at + "1 2 3 4,3", "1 choice(s), want 2 in order"},
		{"rank too many choices", "rank:4:2", "0,1,2,3,1," + at + "1 2 3 4,3 1 2", "3 choices, want 2 in order"},
		{"rank three references", "rank:4:2", "0,1,2,3,1," + at + "1 2 3,3 1", "options: 3 items, a rank:4:2 trial shows 4"},
		{"rank query a reference", "rank:4:2", "0,1,2,3,1," + at + "0 2 3 4,3 2", "the query 0 is also a reference"},
		{"rank repeated reference", "rank:4:2", "0,1,2,3,1," + at + "1 2 3 3,3 1", "reference 3 shown twice"},
		{"rank key not its references", "rank:4:2", "0,1,5,3,1," + at + "1 2 3 4,3 1", "left and right must be two of the trial's options"},
		{"rank wrong derived triplet", "rank:4:2", "0,1,2,1,3," + at + "1 2 3 4,3 1", "closer and farther must be the first triplet the trial derives (3, 1)"},
		{"triplet with choices", "triplet", "0,1,2,1,2," + at + "0 1 2,2", "options and choices are for odd-one-out and rank trials"},
		{"unknown format", "rank:12:2", oddOK, "study.json: unknown question format"},
	}
	for _, c := range cases { //nolint:paralleltest // subtests check what one shared database stores
		t.Run(c.name, func(t *testing.T) {
			data := trialParts(c.format, c.row).zip(t)
			_, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{}, BundleLimits{})
			if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) ||
				(!strings.HasPrefix(c.name, "unknown") && !strings.Contains(err.Error(), "answers.csv line 2: ")) {
				t.Errorf("got %v, want a 422 with answers.csv line 2 and %q", err, c.reason)
			}
		})
	}
	var studies, answers int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM studies), (SELECT count(*) FROM answers)`).Scan(&studies, &answers); err != nil ||
		studies != 0 || answers != 0 {
		t.Fatalf("refused bundles stored %d studies and %d answers, %v", studies, answers, err)
	}
	for i, ok := range []struct{ format, row, anchor string }{ //nolint:paralleltest // no subtests: one database, studies imported in turn
		{"odd-one-out", oddOK, "0 0"},
		// The question keeps its key (2, 0, 1); the answer its first derived triplet's anchor, 0.
		{"odd-one-out", "2,0,1,1,2," + at + "0 1 2,2", "2 0"},
		{"rank:4:2", rankOK, "0 0"},
	} {
		data := trialParts(ok.format, ok.row).zip(t)
		st, rep, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: fmt.Sprintf("ok-%d", i)}, BundleLimits{})
		if err != nil || rep.Answers != 1 || st.Format != ok.format {
			t.Fatalf("%s %s: %+v %v, format %q", ok.format, ok.row, rep, err, st.Format)
		}
		var anchors string
		if err := pool.QueryRow(ctx, `SELECT q.anchor || ' ' || a.anchor FROM answers a JOIN questions q ON q.id = a.question_id
			WHERE a.study_id = $1`, st.ID).Scan(&anchors); err != nil || anchors != ok.anchor {
			t.Fatalf("%s: question and answer anchors %q, %v; want %q", ok.row, anchors, err, ok.anchor)
		}
	}
	// A version 3 bundle is read as it always was: a triplet study, its
	// format (which version 3 never wrote) ignored.
	p := validParts()
	p.manifest = strings.Replace(p.manifest, `"version": 1`, `"version": 3`, 1)
	p.study = strings.Replace(p.study, `"design"`, `"format": "odd-one-out", "design"`, 1)
	data := p.zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "v3"}, BundleLimits{})
	if err != nil || st.Format != "triplet" {
		t.Fatalf("version 3 bundle: format %q, %v", st.Format, err)
	}
}
