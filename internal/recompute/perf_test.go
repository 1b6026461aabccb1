package recompute_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
)

var perf = flag.Bool("perf", false, "run the recompute cost check of issue 28 (timings are logged, never asserted)")

// TestPerfRunWithTrust times one whole recompute run in PostgreSQL with the
// default settings (study.DefaultRecomputeSettings: t-STE in 2-D, the
// dimension choice over d = 1..5 by 5-fold cross-validation, 100 bootstrap
// replicates resampling participants, the projection) at issue 28's size:
// 300 items, 15,000 answers of 300 participants (synthCSV: two clusters in
// 2-D, no wrong answers).
//
//	go test ./internal/recompute -run TestPerfRunWithTrust -perf -v
func TestPerfRunWithTrust(t *testing.T) { //nolint:paralleltest // a timing: alone
	if !*perf {
		t.Skip("cost check; run with -perf")
	}
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "perf", synthCSV(t, 300, 15000, 300, 28))
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load average before: %s", strings.TrimSpace(string(load)))
	runID, err := recompute.Run(ctx, store, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	load, _ = os.ReadFile("/proc/loadavg")
	t.Logf("load average after: %s", strings.TrimSpace(string(load)))
	run, err := store.LatestRun(ctx, st.ID)
	if err != nil || run.ID != runID {
		t.Fatal(run, err)
	}
	blob, err := store.RunResult(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Timings {
		t.Logf("%-12s %7.2f s", s.Stage, s.MS/1000)
	}
	tr, err := store.RunTrust(ctx, runID)
	if err != nil || tr == nil || tr.Dimensions == nil {
		t.Fatal(tr, err)
	}
	t.Logf("suggested d = %d; run %.2f s in all (%s)", tr.Dimensions.Suggested, run.Duration.Seconds(), run.Settings)
}
