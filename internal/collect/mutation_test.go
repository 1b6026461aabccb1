package collect_test

// Tests written for surviving mutants of a mutation-testing sample of this
// package (docs/mutation/collect.md).

import (
	"context"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A design's settings may change until its first question is issued, and
// not after: then saving the study with the same settings (another title,
// Repeats left 0 for its default 1) still succeeds, and a change of
// Repeats is a KindConflict.
func TestDesignSettingsFixedOnceAsked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	st := designStudy(t, s, "fixed", study.DesignLandmarkK1, study.DesignConfig{Seed: 4, Landmarks: 2}, 5, 3)
	update := func(title string, cfg study.DesignConfig) (study.Study, error) {
		return s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: title, QuestionsPerParticipant: 3,
			Status: study.StatusOpen, Design: study.DesignLandmarkK1, DesignConfig: cfg})
	}
	if _, err := update("before", study.DesignConfig{Seed: 4, Landmarks: 3}); err != nil {
		t.Fatalf("change before any question: %v", err)
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := s.Next(ctx, p.ID); err != nil || pr.Question == nil {
		t.Fatalf("first question: %+v, %v", pr, err)
	}
	for _, cfg := range []study.DesignConfig{{Seed: 4, Landmarks: 3, Repeats: 1}, {Seed: 4, Landmarks: 3}} {
		got, err := update("after", cfg)
		if err != nil || got.Title != "after" {
			t.Errorf("same settings %+v after a question: %q, %v; want saved", cfg, got.Title, err)
		}
	}
	_, err = update("changed", study.DesignConfig{Seed: 4, Landmarks: 3, Repeats: 3})
	if collect.KindOf(err) != study.KindConflict || !strings.Contains(err.Error(), "cannot change after questions were issued") {
		t.Errorf("repeats 3 after a question: %v; want a conflict", err)
	}
	if c, err := s.DesignConfigOf(ctx, st.ID); err != nil || c.Repeats != 1 || c.Landmarks != 3 {
		t.Errorf("stored settings %+v, %v; want repeats 1, 3 landmarks", c, err)
	}
}

// More answers waiting in the inbox than one writer transaction records
// (inboxBatch, 1000): RecordPending returns only when every one of them is
// in the design.
func TestRecordPendingMoreThanOneBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	// k1 on 9 items and 3 landmarks: 21 comparisons, each wanted 50 times.
	st := designStudy(t, s, "batch", study.DesignLandmarkK1, study.DesignConfig{Seed: 2, Landmarks: 3, Repeats: 50}, 9, 3)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := s.Next(ctx, p.ID); err != nil || pr.Question == nil || pr.Question.Design != study.DesignLandmarkK1 {
		t.Fatalf("first question: %+v, %v", pr, err) // it creates the design's state and pool
	}
	// 1001 answers the design accepts (at most 48 per comparison), as
	// stopped replicas would leave them.
	const pending = 1001
	tag, err := pool.Exec(ctx, `
		INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther)
		SELECT $1, $2, x.anchor, x.j, x.k FROM design_pool x, generate_series(1, 48) g
		WHERE x.study_id = $1 ORDER BY g, x.anchor, x.j, x.k LIMIT $3`, st.ID, p.ID, pending)
	if err != nil || tag.RowsAffected() != pending {
		t.Fatalf("inbox: %v rows, %v", tag.RowsAffected(), err)
	}
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	var inbox int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_inbox WHERE study_id = $1`, st.ID).Scan(&inbox); err != nil {
		t.Fatal(err)
	}
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if inbox != 0 || status.Recorded != pending {
		t.Errorf("after RecordPending: %d answers left in the inbox, %d recorded; want 0, %d", inbox, status.Recorded, pending)
	}
}

// A basis study whose stored settings leave Repeats out (an imported
// bundle's design_config is stored as it is) runs with the default, 1: the
// scheme built from them says so.
func TestBasisDefaultRepeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	var st study.Study
	err := s.ImportStudy(ctx, func(imp study.ImportWriter) error {
		var err error
		if st, err = imp.CreateStudy(study.StudyInput{Slug: "imported", Title: "Imported", QuestionsPerParticipant: 3,
			Status: study.StatusOpen, Design: study.DesignBasis}); err != nil {
			return err
		}
		return imp.SetDesignConfig([]byte(`{"seed": 7}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	collect.InsertLabelItems(t, pool, st.ID, 8)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := s.Next(ctx, p.ID); err != nil || pr.Question == nil || pr.Question.Design != study.DesignBasis {
		t.Fatalf("first question: %+v, %v", pr, err)
	}
	d, err := s.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := d.(*basis.Scheme)
	if !ok {
		t.Fatalf("design state is %T", d)
	}
	if got := b.Config(); got.Repeats != 1 || got.Seed != 7 {
		t.Errorf("scheme's settings %+v; want repeats 1, seed 7", got)
	}
}
