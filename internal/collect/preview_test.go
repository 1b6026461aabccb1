package collect_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// previewStudy is a draft study on Prolific with a quota of one, two arms
// and a held-out share (what the first question freezes), holding the
// first eight demo images.
func previewStudy(t *testing.T) (*collect.Store, *pgxpool.Pool, study.Study, study.StudyInput) {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	in := study.StudyInput{Slug: "pv", Title: "PV", QuestionsPerParticipant: 4, Status: study.StatusDraft,
		Platform:     study.Platform{Kind: study.PlatformProlific, CompletionCode: "DONE"},
		Quota:        study.Quota{MaxParticipants: 1},
		Arms:         []study.Arm{{Name: "a", Design: study.DesignRandom, Share: 0.5}, {Name: "b", Design: study.DesignRandom, Share: 0.5}},
		HeldoutShare: 0.5}
	st, err := s.CreateStudy(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:8]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	return s, pool, st, in
}

// answerAll answers every question of participant id (the first option),
// through AnswerNext, and returns how many it answered.
func answerAll(t *testing.T, s *collect.Store, id int64) int {
	t.Helper()
	ctx := context.Background()
	pr, err := s.Next(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for !pr.Done {
		if pr.Question == nil {
			t.Fatalf("no question and not done after %d answers: %+v", n, pr)
		}
		if _, pr, err = s.AnswerNext(ctx, id, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatalf("answer %d: %v", n+1, err)
		}
		n++
	}
	return n
}

// count runs a count query with the study's id.
func count(t *testing.T, pool *pgxpool.Pool, sql string, studyID int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, studyID).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// A preview session of a draft study on a platform, without an id,
// answers the whole study; its questions are random (no design, no
// held-out question), cast no vote, freeze neither the arms nor the
// held-out share, take no arm and no quota place; every result, count and
// export leaves it out but the export that asks for previews, whose
// preview column marks its rows; DeletePreviews deletes it with its
// answers.
func TestPreviewSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, st, in := previewStudy(t)

	p, token, err := s.CreatePreviewParticipant(ctx, st.ID)
	if err != nil {
		t.Fatalf("preview of a draft study on Prolific: %v", err)
	}
	if !p.Preview || token == "" {
		t.Fatalf("preview participant %+v, token %q", p, token)
	}
	if who, err := s.AuthenticateParticipant(ctx, token); err != nil || !who.Preview || who.ID != p.ID {
		t.Fatalf("the preview's token: %+v, %v", who, err)
	}
	if n := answerAll(t, s, p.ID); n != 4 {
		t.Fatalf("the preview answered %d questions, want 4", n)
	}
	rows, err := pool.Query(ctx, `SELECT design FROM questions WHERE participant_id = $1`, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		if d != study.DesignRandom {
			t.Errorf("a preview was asked a %q question, want random only", d)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 4 {
		t.Fatalf("%d answers stored, want the preview's 4", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM votes WHERE study_id = $1`, st.ID); n != 0 {
		t.Errorf("the preview cast %d votes", n)
	}
	if n := count(t, pool, `SELECT coalesce(sum(c), 0)::int FROM arm_counts, unnest(counts) c WHERE study_id = $1`, st.ID); n != 0 {
		t.Errorf("the arms count %d participants after a preview", n)
	}

	// Nothing is frozen: the arms and the held-out share still change.
	if frozen, err := s.QuestionsIssued(ctx, st.ID); err != nil || frozen {
		t.Fatalf("QuestionsIssued after a preview: %t, %v", frozen, err)
	}
	in.Arms = []study.Arm{{Name: "a", Design: study.DesignRandom, Share: 0.25}, {Name: "b", Design: study.DesignRandom, Share: 0.75}}
	in.HeldoutShare = 0
	in.Status = study.StatusOpen
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatalf("changing the arms and held-out share after a preview: %v", err)
	}

	// The quota's one place is still free for a real participant.
	real, _, err := s.CreateParticipant(ctx, st.ID, "PID1", nil)
	if err != nil {
		t.Fatalf("the first real participant of a quota of 1 after a preview: %v", err)
	}
	if real.Preview {
		t.Fatal("a real participant marked preview")
	}
	if n := answerAll(t, s, real.ID); n != 4 {
		t.Fatalf("the participant answered %d questions, want 4", n)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "PID2", nil); collect.KindOf(err) != study.KindFull {
		t.Fatalf("a second real participant with a quota of 1: %v; want KindFull", err)
	}
	// A preview still starts in a full study.
	p2, _, err := s.CreatePreviewParticipant(ctx, st.ID)
	if err != nil {
		t.Fatalf("a preview of a full study: %v", err)
	}
	if frozen, err := s.QuestionsIssued(ctx, st.ID); err != nil || !frozen {
		t.Fatalf("QuestionsIssued after a real participant: %t, %v", frozen, err)
	}

	// Results and counts hold the real participant's answers only.
	ra, err := s.RunAnswers(ctx, st.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ra {
		if a.Participant == p.ID {
			t.Fatal("RunAnswers holds a preview's answer")
		}
	}
	stats, err := s.StudyStats(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	realTriplets := count(t, pool, `SELECT count(*) FROM answers WHERE participant_id = $1`, real.ID)
	if stats.Participants != 1 || stats.Completed != 1 || stats.Answers != realTriplets || len(ra) != realTriplets {
		t.Errorf("stats %+v, run answers %d; want 1 participant and %d answers", stats, len(ra), realTriplets)
	}
	dc, err := s.DashboardCounts(ctx, st.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if dc.Participants != 1 || dc.Answers != realTriplets || dc.People[p.ID] != 0 {
		t.Errorf("dashboard counts: %d participants, %d answers, preview's %d; want 1, %d, 0",
			dc.Participants, dc.Answers, dc.People[p.ID], realTriplets)
	}
	list, err := s.ListStudies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Participants != 1 || list[0].Answers != realTriplets {
		t.Errorf("studies list: %+v; want 1 participant and %d answers", list, realTriplets)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var marked []int64
	for _, r := range ps {
		if r.Preview {
			marked = append(marked, r.ID)
		}
	}
	if !slices.Equal(marked, []int64{p2.ID, p.ID}) {
		t.Errorf("participants marked preview: %v; want %v", marked, []int64{p2.ID, p.ID})
	}

	// Exports: without the previews by default, with them and the preview
	// column on request.
	for _, o := range []study.ExportOptions{{}, {All: true}, {Previews: true}, {Previews: true, All: true}} {
		var buf bytes.Buffer
		if err := s.ExportAnswersCSV(ctx, st.ID, &buf, o); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head, body := recs[0], recs[1:]
		previewRows, realRows := 0, 0
		for _, r := range body {
			switch r[2] {
			case p.PublicID:
				previewRows++
				if r[len(r)-1] != "true" {
					t.Errorf("%+v: a preview's row %v does not say preview", o, r)
				}
			case real.PublicID:
				realRows++
				if o.Previews && r[len(r)-1] != "false" {
					t.Errorf("%+v: a real row %v says preview", o, r)
				}
			}
		}
		wantPreview := 0
		if o.Previews {
			wantPreview = 4
		}
		if o.Previews != (head[len(head)-1] == study.PreviewColumn) || previewRows != wantPreview || realRows == 0 {
			t.Errorf("%+v: columns %v, %d preview rows (want %d), %d real rows", o, head, previewRows, wantPreview, realRows)
		}
	}

	// Deleting the previews deletes them with their answers, and nothing
	// of the real participant.
	if n, err := s.CountPreviews(ctx, st.ID); err != nil || n != 2 {
		t.Fatalf("CountPreviews: %d, %v; want 2", n, err)
	}
	if n, err := s.DeletePreviews(ctx, st.ID); err != nil || n != 2 {
		t.Fatalf("DeletePreviews: %d, %v; want 2", n, err)
	}
	if n := count(t, pool, `SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != realTriplets {
		t.Errorf("%d answers after deleting the previews, want the participant's %d", n, realTriplets)
	}
	if n := count(t, pool, `SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d participants after deleting the previews, want 1", n)
	}
	if _, err := s.Next(ctx, p.ID); collect.KindOf(err) != study.KindUnauthorized {
		t.Errorf("a deleted preview asking for a question: %v; want KindUnauthorized", err)
	}
}

// A study with fewer than three items, or items without an image, cannot
// be previewed; the refusal says why.
func TestPreviewNeedsItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "few", Title: "Few", QuestionsPerParticipant: 2, Status: study.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreatePreviewParticipant(ctx, st.ID); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("a preview of a study without items: %v; want KindConflict", err)
	}
	if _, _, err := s.CreatePreviewParticipant(ctx, st.ID+1000); collect.KindOf(err) != study.KindConflict && collect.KindOf(err) != study.KindNotFound {
		t.Fatalf("a preview of no study: %v", err)
	}
}
