package collect_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"strconv"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// newStudy returns a store on a fresh database and an open study holding
// the first n demo images.
func newStudy(t *testing.T, n, perParticipant int) (*collect.Store, study.Study) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: perParticipant, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	return s, st
}

func TestRandomDesignNeverRepeatsAndCompletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// 4 items have 4*3*2/2 = 12 distinct comparisons; ask for 20, so the
	// design runs out after 12 and the participant completes early.
	s, st := newStudy(t, 4, 20)
	p, _, err := s.CreateParticipant(ctx, st.ID, "ext-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[triplet.Key]bool{}
	for i := 0; ; i++ {
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done {
			if pr.CompletionCode == "" || i != 12 {
				t.Fatalf("done after %d answers with code %q; want 12 and a code", i, pr.CompletionCode)
			}
			break
		}
		again, err := s.Next(ctx, p.ID)
		if err != nil || again.Question.ID != pr.Question.ID {
			t.Fatalf("asking again gave %v, %v; want the same pending question", again.Question, err)
		}
		q := pr.Question
		c := study.Comparison{Anchor: q.Anchor.Index, Left: q.Options[0].Index, Right: q.Options[1].Index}
		if seen[c.Key()] {
			t.Fatalf("comparison %v asked twice", c.Key())
		}
		seen[c.Key()] = true
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
	// The code is stable.
	pr, err := s.Next(ctx, p.ID)
	if err != nil || !pr.Done || pr.Answered != 12 {
		t.Fatalf("after completion: %+v %v", pr, err)
	}
}

func TestAnswerRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 6, 5)
	p1, _, _ := s.CreateParticipant(ctx, st.ID, "", nil)
	p2, _, _ := s.CreateParticipant(ctx, st.ID, "", nil)
	pr, err := s.Next(ctx, p1.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := pr.Question
	notOption := 0
	for notOption == q.Options[0].Index || notOption == q.Options[1].Index {
		notOption++
	}
	cases := []struct {
		name string
		pid  int64
		in   study.AnswerInput
		kind study.Kind
	}{
		{"other participant", p2.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}, study.KindForbidden},
		{"not an option", p1.ID, study.AnswerInput{QuestionID: q.ID, Closer: notOption}, study.KindInvalid},
		{"unknown question", p1.ID, study.AnswerInput{QuestionID: "nope", Closer: q.Options[0].Index}, study.KindNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := s.Answer(ctx, c.pid, c.in); collect.KindOf(err) != c.kind {
				t.Errorf("got %v, want kind %d", err, c.kind)
			}
		})
	}
	v, _ := s.Votes(ctx, st.ID)
	if v.Len() != 0 {
		t.Fatalf("refused answers left %d votes", v.Len())
	}
	created, err := s.Answer(ctx, p1.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[1].Index})
	if err != nil || !created {
		t.Fatalf("answer: %v %v", created, err)
	}
	created, err = s.Answer(ctx, p1.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[1].Index})
	if err != nil || created {
		t.Fatalf("same answer again: created=%v err=%v; want false, nil", created, err)
	}
	if _, err := s.Answer(ctx, p1.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("other choice: %v; want conflict", err)
	}
	v, _ = s.Votes(ctx, st.ID)
	if v.Len() != 1 || v.Count(q.Anchor.Index, q.Options[1].Index, q.Options[0].Index) != 1 {
		t.Fatalf("votes after one answer: %d keys", v.Len())
	}
	stats, _ := s.StudyStats(ctx, st.ID)
	if stats.Answers != 1 || stats.Participants != 2 {
		t.Fatalf("stats %+v", stats)
	}
}

func TestAddItemsDuplicatesAndOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "x", Title: "X", QuestionsPerParticipant: 3})
	if err != nil {
		t.Fatal(err)
	}
	imgs := demo.Items()
	named := func(name string, im media.Image) media.Image { im.Name, im.Label = name, name; return im }
	// First upload: img10, img2; second: img1, a copy of img2's bytes, img3.
	_, rej, err := s.AddItems(ctx, st.ID, []media.Image{named("img10", imgs[0]), named("img2", imgs[1])})
	if err != nil || len(rej) != 0 {
		t.Fatal(rej, err)
	}
	_, rej, err = s.AddItems(ctx, st.ID, []media.Image{named("img1", imgs[2]), named("copy", imgs[1]), named("img3", imgs[3])})
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) != 1 || rej[0].Name != "copy" || rej[0].Reason != "duplicate of img2" {
		t.Fatalf("rejections %v", rej)
	}
	items, _ := s.ListItems(ctx, st.ID)
	var names []string
	for i, it := range items {
		if it.Index != i {
			t.Fatalf("item %d has index %d", i, it.Index)
		}
		names = append(names, it.FileName)
	}
	want := []string{"img1", "img2", "img3", "img10"}
	if len(names) != len(want) {
		t.Fatalf("items %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("items %v, want %v (natural order)", names, want)
		}
	}
}

func TestExportEqualsAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 8, 6)
	p, _, _ := s.CreateParticipant(ctx, st.ID, "worker-7", nil)
	var given []triplet.Triplet
	for {
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done {
			break
		}
		q := pr.Question
		closer, farther := q.Options[0].Index, q.Options[1].Index
		if len(given)%2 == 1 {
			closer, farther = farther, closer
		}
		ms := 100 + len(given)
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: closer, ResponseMS: &ms}); err != nil {
			t.Fatal(err)
		}
		given = append(given, triplet.Triplet{Anchor: q.Anchor.Index, Closer: closer, Farther: farther})
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, st.ID, &buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(given)+1 {
		t.Fatalf("%d rows, want %d answers", len(recs)-1, len(given))
	}
	for i, r := range recs[1:] {
		a, _ := strconv.Atoi(r[4])
		c, _ := strconv.Atoi(r[5])
		f, _ := strconv.Atoi(r[6])
		if (triplet.Triplet{Anchor: a, Closer: c, Farther: f}) != given[i] || r[3] != "worker-7" || r[13] != strconv.Itoa(100+i) {
			t.Fatalf("row %d = %v, want %v", i, r, given[i])
		}
	}
}

func TestNotOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 3)
	p, _, _ := s.CreateParticipant(ctx, st.ID, "", nil)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: study.StatusPaused}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx, p.ID); collect.KindOf(err) != study.KindNotOpen {
		t.Fatalf("next on paused study: %v", err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "", nil); collect.KindOf(err) != study.KindNotOpen {
		t.Fatalf("join paused study: %v", err)
	}
	var ue *study.Error
	if _, err := s.CreateStudy(ctx, study.StudyInput{Slug: "Bad Slug", Title: "t", QuestionsPerParticipant: 1}); !errors.As(err, &ue) || ue.Kind != study.KindInvalid {
		t.Fatalf("bad slug: %v", err)
	}
}

// The export reads its cursor in batches: more rows than one batch all
// arrive, in answer order.
func TestExportManyRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 40, 50)
	const participants, per = 300, 41 // 12300 answers, more than two batches
	_, err := collect.PoolOf(s).Exec(ctx, `
		INSERT INTO participants (public_id, study_id, token_hash)
		SELECT 'bulk' || g, $1, decode(md5('t' || g), 'hex') FROM generate_series(1, $2::int) g`, st.ID, participants)
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect.PoolOf(s).Exec(ctx, `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at)
		SELECT 'q' || p.id || '-' || i, $1, p.id, i % 40, (i + 1) % 40, (i + 2 + i / 40) % 40, 'random',
			timestamptz '2026-01-01' + make_interval(secs => p.id * 100 + i)
		FROM participants p, generate_series(0, $2::int - 1) i WHERE p.study_id = $1`, st.ID, per)
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect.PoolOf(s).Exec(ctx, `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, answered_at)
		SELECT id, study_id, participant_id, anchor, left_idx, right_idx, issued_at FROM questions WHERE study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, st.ID, &buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs)-1 != participants*per {
		t.Fatalf("%d rows, want %d", len(recs)-1, participants*per)
	}
	for i := 2; i < len(recs); i++ {
		if recs[i][15] < recs[i-1][15] {
			t.Fatalf("row %d answered before row %d", i, i-1)
		}
	}
}
