package simulate

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

var (
	formatSeeds = flag.Int("format-seeds", 10, "TestReproduceFormats: seeds per set, format and crowd")
	formatAlpha = flag.Float64("format-alpha", 0, "TestReproduceFormats: t-STE's α for both fits (0: the default, max(dim−1, 1))")
)

// formatSet is a point set of TestReproduceFormats.
type formatSet struct {
	name string
	make func(seed uint64) *mat.Dense
}

var formatReproSets = []formatSet{
	// gauss2: 100 points in R^2 from N(0, I).
	{"gauss2", func(seed uint64) *mat.Dense { return triplet.Gaussian(triplet.NewRand(seed), 100, 2, 1) }},
	// gmm5: 200 points in R^5, 4 unit-variance clusters at distance 3.
	{"gmm5", func(seed uint64) *mat.Dense {
		x, _ := triplet.GaussianMixture(triplet.NewRand(seed), 200, 5, 4, 3)
		return x
	}},
}

// formatCrowd is a crowd of TestReproduceFormats.
type formatCrowd struct {
	name        string
	p, temp     float64
	description string
}

var formatCrowds = []formatCrowd{
	{"exact", 0, 0, "error-free"},
	{"flip10", 0.1, 0, "10% wrong choices"},
	{"luce", 0, 0.5, "choices drawn by the choice model, T = 0.5"},
}

// TestReproduceFormats compares, at equal data, the native fit of
// odd-one-out and rank 8-choose-2 trials (embed.FitOddOneOut, FitRank)
// with t-STE on their derived triplets: on two point sets, three crowds
// and -format-seeds seeds, random trials, t-STE's defaults (α from
// -format-alpha) in the true dimension, judged by the held-out error on 10,000 fresh noise-free
// triplets and by the format's own score on 1,000 held-out crowd trials
// (docs/reproductions.md, "Odd-one-out and rank trials (issue 27)"). It
// reports means, standard errors and paired wins; it asserts nothing
// about which fit wins.
func TestReproduceFormats(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("reproduction: run with -reproduce")
	}
	type format struct {
		name   string
		spec   trial.RankSpec
		budget map[string]int
	}
	formats := []format{
		{"odd-one-out", trial.RankSpec{}, map[string]int{"gauss2": 2000, "gmm5": 6000}},
		{"rank:8:2", trial.RankSpec{N: 8, K: 2}, map[string]int{"gauss2": 300, "gmm5": 900}},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-7s %-12s %-7s %6s %9s  %-17s %-17s %-6s  %-15s %-15s\n", "set", "format", "crowd", "trials", "triplets",
		"heldout native", "heldout derived", "wins", "score native", "score derived")
	for _, set := range formatReproSets {
		for _, f := range formats {
			for _, c := range formatCrowds {
				m := f.budget[set.name]
				var hn, hd, sn, sd []float64
				wins := 0
				triplets := 0
				for s := range *formatSeeds {
					seed := uint64(1000*s + 1)
					x := set.make(seed)
					_, dim := x.Dims()
					o := NewTrialOracle(x, c.p, seed+1)
					o.Temperature = c.temp
					rng := triplet.NewRand(seed + 2)
					var all Trials
					if f.spec.N == 0 {
						all = Trials{Odd: RandomOddOneOut(rng, o, m+1000)}
					} else {
						all = Trials{Rank: RandomRank(rng, o, f.spec, m+1000)}
					}
					train, test := all.Head(m), tailTrials(all, m)
					triplets = len(train.Triplets())
					truth := Truth{X: x, Heldout: Heldout(x, 10000, seed+3)}
					opt := embed.Options{Params: embed.TSTEParams{Alpha: *formatAlpha}, Dim: dim, Seed: seed + 4}
					qn, err := AssessTrials(context.Background(), truth, train, test, true, opt)
					if err != nil {
						t.Fatal(err)
					}
					qd, err := AssessTrials(context.Background(), truth, train, test, false, opt)
					if err != nil {
						t.Fatal(err)
					}
					hn, hd = append(hn, qn.Heldout), append(hd, qd.Heldout)
					sn, sd = append(sn, qn.Score), append(sd, qd.Score)
					if qn.Heldout < qd.Heldout {
						wins++
					}
				}
				fmt.Fprintf(&b, "%-7s %-12s %-7s %6d %9d  %-17s %-17s %2d/%-3d  %-15s %-15s\n", set.name, f.name, c.name, m, triplets,
					meanSE(hn), meanSE(hd), wins, *formatSeeds, meanSE(sn), meanSE(sd))
			}
		}
	}
	t.Log(b.String())
}

func tailTrials(t Trials, m int) Trials {
	if t.Odd != nil {
		return Trials{Odd: t.Odd[m:]}
	}
	return Trials{Rank: t.Rank[m:]}
}

// meanSE formats the mean and its standard error.
func meanSE(v []float64) string {
	var s, ss float64
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	se := 0.0
	if len(v) > 1 {
		se = math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
	}
	return fmt.Sprintf("%.4f ± %.4f", mean, se)
}
