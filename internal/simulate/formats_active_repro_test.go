package simulate

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

var oddActiveSeeds = flag.Int("odd-active-seeds", 10, "TestReproduceOddActive: seeds per set and noise level")

// TestReproduceOddActive compares active odd-one-out trials (oddactive:
// the most uncertain of 20 random candidates per trial under the native
// fit, refitted every n trials after a warm-up of 5n random ones) with
// random ones at ten equal budgets, on the two sets of
// TestReproduceFormats (gauss2: 100 points in R^2; gmm5: 200 points in
// R^5, 4 clusters), error-free and with 10% wrong answers, over
// -odd-active-seeds seeds. The judge at each budget is a native fit
// (t-STE's defaults, the true dimension, default starts) of all trials so
// far, scored by the odd-one-out accuracy on 5,000 noise-free random
// trials. It reports the mean accuracies and the share of random's budget
// from which active's mean accuracy stays at or above random's final one
// (issue 27's target: at most 60%); it asserts nothing.
func TestReproduceOddActive(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("reproduction: run with -reproduce")
	}
	budgets := map[string]int{"gauss2": 2000, "gmm5": 6000}
	var b strings.Builder
	for _, set := range formatReproSets {
		for _, p := range []float64{0, 0.1} {
			budget := budgets[set.name]
			cps := Even(budget, 10)
			acc := map[bool][]float64{false: make([]float64, len(cps)), true: make([]float64, len(cps))}
			for s := range *oddActiveSeeds {
				seed := uint64(1000*s + 1)
				x := set.make(seed)
				n, dim := x.Dims()
				rng := triplet.NewRand(seed + 2)
				test := RandomOddOneOut(rng, NewTrialOracle(x, 0, seed+3), 5000)
				for _, active := range []bool{false, true} {
					r := OddRun{Oracle: NewTrialOracle(x, p, seed+1), Active: active, Fit: embed.Options{Dim: dim}, Seed: seed + 4}
					k := 0
					err := RunOddOneOut(context.Background(), r, budget, cps, func(cp OddCheckpoint) error {
						acc[active][k] += oddAccuracy(t, n, dim, cp.Trials, test, seed+5) / float64(*oddActiveSeeds)
						k++
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			final := acc[false][len(cps)-1]
			reach := -1
			for k := len(cps) - 1; k >= 0 && acc[true][k] >= final; k-- {
				reach = cps[k]
			}
			share := "not reached"
			if reach > 0 {
				share = fmt.Sprintf("%d answers, %.0f%% of random's", reach, 100*float64(reach)/float64(budget))
			}
			fmt.Fprintf(&b, "\n%s, error %g: random's final accuracy %.4f reached by active at %s\n", set.name, p, final, share)
			fmt.Fprintf(&b, "  %-8s %s\n", "trials", strings.Trim(fmt.Sprint(cps), "[]"))
			for _, active := range []bool{false, true} {
				name := "random"
				if active {
					name = "active"
				}
				fmt.Fprintf(&b, "  %-8s", name)
				for _, v := range acc[active] {
					fmt.Fprintf(&b, " %.4f", v)
				}
				b.WriteString("\n")
			}
		}
	}
	t.Log(b.String())
}
