package recompute_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// A recompute of a study deleted after it was enqueued computes nothing
// and stores no run (the purge deletes the study's runs).
func TestRunOfDeletedStudy(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 12, 200, 4, 1))
	if err := store.MarkStudyDeleted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	runID, err := recompute.Run(ctx, store, st.ID, 0)
	if collect.KindOf(err) != study.KindNotFound || runID != 0 {
		t.Fatalf("run of a deleted study: run %d, %v", runID, err)
	}
	if runs, err := store.Runs(ctx, st.ID); err != nil || len(runs) != 0 {
		t.Fatalf("runs stored: %v %v", runs, err)
	}
}
