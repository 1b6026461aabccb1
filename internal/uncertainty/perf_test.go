package uncertainty

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/dimension"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

var (
	perf     = flag.Bool("perf", false, "run the cost check of issue 28 (timings are logged, never asserted)")
	perfCold = flag.Bool("cold", false, "fit the -perf replicates from the default start")
	perfIter = flag.Int("iter", 0, "iteration cap of a -perf replicate (0: the default)")
)

// TestPerfRecomputeWithTrust times what a recompute with dimension choice
// and uncertainty costs at the size: 300 items, 15,000 answers
// (2-D truth, 10% wrong, 300 participants of 50 answers), 10% held out;
// dimension by 5-fold cross-validation over d = 1..5 (dimension's default
// method), the reference t-STE fit at the suggested d, and 100 bootstrap
// replicates resampling participants.
//
//	go test ./internal/uncertainty -run TestPerfRecomputeWithTrust -perf -v -cpuprofile /tmp/trust.prof
func TestPerfRecomputeWithTrust(t *testing.T) {
	t.Parallel()
	if !*perf {
		t.Skip("cost check; run with -perf")
	}
	const n, m = 300, 15000
	rng := triplet.NewRand(28)
	x := triplet.Gaussian(rng, n, 2, 1)
	all := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 28), m)
	parts := make([]int, m)
	for i := range parts {
		parts[i] = i / 50
	}
	perm := triplet.NewRand(1).Perm(m)
	var train, test []triplet.Triplet
	var groups []int
	for k, i := range perm {
		if k < m/10 {
			test = append(test, all[i])
		} else {
			train = append(train, all[i])
			groups = append(groups, parts[i])
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load average before: %s", strings.TrimSpace(string(load)))
	ctx := context.Background()
	start := time.Now()
	dims, err := dimension.CrossValidate(ctx, n, train, dimension.Options{Fit: embed.Options{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	tDims := time.Since(start)
	for _, r := range dims.Rows {
		t.Logf("d=%d held-out %.4f ± %.4f", r.Dim, r.Mean, r.SE)
	}
	fit := embed.Options{Method: embed.TSTE, Dim: dims.Suggested, Seed: 1}
	s := time.Now()
	ref, err := embed.Fit(ctx, n, train, fit)
	if err != nil {
		t.Fatal(err)
	}
	tRef := time.Since(s)
	s = time.Now()
	fit.MaxIter = *perfIter
	res, err := Bootstrap(ctx, n, train, ref.X, Options{Fit: fit, Reps: 100, Groups: groups, Test: test, Cold: *perfCold})
	if err != nil {
		t.Fatal(err)
	}
	tBoot := time.Since(s)
	load, _ = os.ReadFile("/proc/loadavg")
	t.Logf("suggested d = %d; held-out error %.4f [%.4f, %.4f]; median spread %.4f, stability %.3f",
		dims.Suggested, res.HeldoutError, res.ErrorLow, res.ErrorHigh, median(res.RMS), median(res.Stability))
	t.Logf("reference fit %d iterations; replicates %.1f iterations each (cold: %v)", ref.Iterations, float64(res.Iterations)/100, *perfCold)
	t.Logf("dimension choice (25 fits) %.2f s, reference fit %.2f s, 100 replicates %.2f s; total %.2f s",
		tDims.Seconds(), tRef.Seconds(), tBoot.Seconds(), time.Since(start).Seconds())
	t.Logf("load average after: %s", strings.TrimSpace(string(load)))
}

func median(v []float64) float64 {
	lo, _ := embed.Percentiles(v, 0)
	return lo
}
