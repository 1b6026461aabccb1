package dashboard

import (
	"cmp"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/closer-lab/closer/internal/triplet"
)

// handQuantile is the quantile the dashboard computed by hand before it
// used stat.Quantile (internal/collect/recompute_dashboard_tally.go at
// 6b2b00f): the middle of the first 10 ms bin, in increasing order, at
// which at least the fraction q of the answers is counted.
func handQuantile(rt map[int64]int, q float64) float64 {
	rtB := make([][2]int64, 0, len(rt))
	for b, n := range rt {
		rtB = append(rtB, [2]int64{b, int64(n)})
	}
	slices.SortFunc(rtB, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	total := int64(0)
	for _, bc := range rtB {
		total += bc[1]
	}
	seen := int64(0)
	for _, bc := range rtB {
		seen += bc[1]
		if float64(seen) >= q*float64(total) {
			return float64(bc[0])*10 + 5
		}
	}
	return float64(rtB[len(rtB)-1][0])*10 + 5
}

// stat.Quantile with stat.Empirical over the bins' middles weighted by
// their counts is the hand-written quantile, number for number: both take
// the first sample at which the cumulative weight reaches p times the
// total (gonum's empiricalQuantile), and integer counts sum exactly in
// float64.
func TestQuantileIsTheHandWrittenOne(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(3)
	for trial := range 300 {
		rt := map[int64]int{}
		for range 1 + rng.IntN(40) {
			rt[int64(rng.IntN(2000))] += 1 + rng.IntN(1+rng.IntN(500))
		}
		tally := &Tally{rt: rt}
		ms, n := tally.responseTimes()
		for _, p := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.999, 1} {
			if got, want := stat.Quantile(p, stat.Empirical, ms, n), handQuantile(rt, p); got != want {
				t.Fatalf("trial %d, p = %v: stat.Quantile %v, by hand %v (bins %v)", trial, p, got, want, rt)
			}
		}
	}
}
