package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// A writer transaction that records an answer in the design and then rolls
// back leaves the process's cached state ahead of the database. Another replica
// then commits a different answer as the same version number; the first
// process must notice (the rev differs) and reload, so the stored design
// counts exactly the committed answers.
func TestDesignCacheSurvivesRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, schs := designStore(pool)
	ds := schs[study.DesignLandmarkK1]
	st := designStudy(t, s, "rb", study.DesignLandmarkK1, study.DesignConfig{Seed: 4, Landmarks: 3}, 8, 5)
	p1, q1 := newQuestion(t, s, st.ID)
	p2, q2 := newQuestion(t, s, st.ID)
	// q1's answer waits in the inbox, and a writer records it in a
	// transaction that then rolls back.
	if _, err := pool.Exec(ctx, `INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther) VALUES ($1, $2, $3, $4, $5)`,
		st.ID, p1, q1.Anchor.Index, q1.Options[0].Index, q1.Options[1].Index); err != nil {
		t.Fatal(err)
	}
	if err := ds.RecordThenRollBack(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM design_inbox WHERE study_id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	before := ds.CacheStats().Restores
	// q2 answered for real through another replica: version 1 in the
	// database, while the first process's cache also says version 1.
	other, _ := designStore(pool)
	if _, err := other.Answer(ctx, p2, study.AnswerInput{QuestionID: q2.ID, Closer: q2.Options[1].Index}); err != nil {
		t.Fatal(err)
	}
	recorded(t, other)
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if status.Recorded != 1 || status.Progress.Landmark.Answered != 1 {
		t.Fatalf("stored design: %d recorded, progress %+v; want the one committed answer", status.Recorded, status.Progress.Landmark)
	}
	// q1 answered for real through the first process: it must reload, and
	// both answers count.
	if _, err := s.Answer(ctx, p1, study.AnswerInput{QuestionID: q1.ID, Closer: q1.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	recorded(t, s)
	if got := ds.CacheStats().Restores; got != before+1 {
		t.Fatalf("restores %d → %d; want one reload after the rollback", before, got)
	}
	d, err := s.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	ld := d.(*landmark.Design)
	for _, q := range []*study.Question{q1, q2} {
		i, ok := ld.Index(triplet.Key{Anchor: q.Anchor.Index, J: min(q.Options[0].Index, q.Options[1].Index), K: max(q.Options[0].Index, q.Options[1].Index)})
		if !ok || ld.Count(i) != 1 {
			t.Fatalf("comparison of question %s: in design %v, count %d; want 1", q.ID, ok, ld.Count(i))
		}
	}
	if ld.Progress().Answered != 2 {
		t.Fatalf("restored design answered %d; want 2", ld.Progress().Answered)
	}
}
