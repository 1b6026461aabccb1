package recompute

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trialactive"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestTrialPoolMoreInformative: the pool trialPool chooses for an active
// odd-one-out or rank arm is more informative than random trials on a
// simulated crowd. The current fit is the crowd's true points with noise
// (a fit part way through a study); against it the pool's trials are
// more uncertain (mean entropy of their answer under the fit, the score
// they are chosen by) and, what the crowd's answers then teach, the fit
// predicts the crowd's answer to them wrongly more often than to random
// trials over the same items. Each trial shows the format's items, holds
// its key (odd-one-out: its three items; rank: the query and two of its
// references), and no key repeats.
func TestTrialPoolMoreInformative(t *testing.T) {
	t.Parallel()
	const n, dim = 40, 2
	alpha := embed.NativeAlpha(embed.Options{Method: embed.TSTE, Dim: dim})
	for _, format := range []string{"odd-one-out", "rank:8:2"} {
		f := study.MustStudyFormat(format)
		var poolH, randH, poolWrong, randWrong float64
		trials := 0
		for seed := range uint64(5) {
			// At the spread of a t-STE fit (α = 1: a unit apart is barely
			// told from two), a fit part way off the truth.
			truth := triplet.Gaussian(triplet.NewRand(100+seed), n, dim, 5)
			fit := mat.DenseCopyOf(truth)
			noise := triplet.Gaussian(triplet.NewRand(200+seed), n, dim, 1.5)
			fit.Add(fit, noise)
			d, err := active.New(n, active.Config{Seed: seed + 1, Pool: n})
			if err != nil {
				t.Fatal(err)
			}
			qs, options, err := trialPool(collect.ActiveArm{State: d, Format: f}, fit, dim)
			if err != nil {
				t.Fatal(err)
			}
			if len(qs) < n*9/10 || len(options) != len(qs) {
				t.Fatalf("%s: a pool of %d trials (%d item sets) for a size of %d", format, len(qs), len(options), n)
			}
			keys := map[triplet.Key]bool{}
			rng := triplet.NewRand(300 + seed)
			for i, q := range qs {
				k, o := q.Key, options[i]
				if keys[k] || len(o) != f.Options() || !slices.Contains(o, k.J) || !slices.Contains(o, k.K) || k.J >= k.K {
					t.Fatalf("%s: trial %d %v shows %v (repeated key: %v)", format, i, k, o, keys[k])
				}
				keys[k] = true
				// A random trial of the same format beside each pool trial.
				var query int
				var random []int
				if f.Format == study.FormatOddOneOut {
					if !slices.Contains(o, k.Anchor) {
						t.Fatalf("odd-one-out trial %v shows %v", k, o)
					}
					a, b, c := triplet.RandomQuestion(rng, n)
					random = []int{a, b, c}
				} else {
					query = k.Anchor
					if slices.Contains(o, query) {
						t.Fatalf("rank trial of query %d shows it among %v", query, o)
					}
					for len(random) < f.Rank.N {
						if v := rng.IntN(n); v != query && !slices.Contains(random, v) {
							random = append(random, v)
						}
					}
				}
				ph, pw := judge(fit, truth, alpha, f, query, o)
				rh, rw := judge(fit, truth, alpha, f, query, random)
				poolH, poolWrong, randH, randWrong = poolH+ph, poolWrong+pw, randH+rh, randWrong+rw
				trials++
			}
		}
		poolH, randH, poolWrong, randWrong = poolH/float64(trials), randH/float64(trials), poolWrong/float64(trials), randWrong/float64(trials)
		t.Logf("%s over %d trials: mean entropy pool %.3f random %.3f; the fit's answer wrong pool %.3f random %.3f",
			format, trials, poolH, randH, poolWrong, randWrong)
		if poolH < 1.1*randH {
			t.Errorf("%s: the pool's mean entropy %.3f is not well above random's %.3f", format, poolH, randH)
		}
		if poolWrong < 1.3*randWrong {
			t.Errorf("%s: the fit mispredicts %.3f of the pool's trials, random's %.3f: not more informative", format, poolWrong, randWrong)
		}
	}
}

// judge returns the entropy of the fit's answer to a trial (odd-one-out:
// items; rank: the references items of query) and 1 when the fit's most
// likely answer (the odd one; the first choice) is not the true points'.
func judge(fit, truth *mat.Dense, alpha float64, f study.StudyFormat, query int, items []int) (h, wrong float64) {
	argmax := func(p []float64) int {
		best := 0
		for i, v := range p {
			if v > p[best] {
				best = i
			}
		}
		return best
	}
	p, q := make([]float64, len(items)), make([]float64, len(items))
	if f.Format == study.FormatOddOneOut {
		var pf, pt [3]float64
		embed.OddOneOutProbs(&pf, fit, alpha, [3]int(items))
		embed.OddOneOutProbs(&pt, truth, alpha, [3]int(items))
		copy(p, pf[:])
		copy(q, pt[:])
		h = trialactive.Entropy(fit, alpha, [3]int(items))
	} else {
		embed.RankFirstProbs(p, fit, alpha, query, items)
		embed.RankFirstProbs(q, truth, alpha, query, items)
		h = trialactive.RankEntropy(fit, alpha, query, items)
	}
	if argmax(p) != argmax(q) {
		wrong = 1
	}
	return h, wrong
}
