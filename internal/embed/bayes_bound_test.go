package embed

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

var (
	bayesIter = flag.Int("bayes-iter", 20000, "elliptical slice sampling iterations per chain of TestTable1BayesBound")
	bayesThin = flag.Int("bayes-thin", 20, "keep every this many sweeps in TestTable1BayesBound")
	bayesTest = flag.Int("bayes-test", 20000, "test triplets scored per data set in TestTable1BayesBound")
)

// posteriorSampler draws from the posterior of the Table 1 generative model
// given noise-free training triplets: the prior is the model's own, every
// coordinate i.i.d. N(0, 1/20), and the likelihood is the indicator that
// every training triplet holds. It uses elliptical slice sampling (Murray,
// Adams and MacKay 2010, Figure 2), which needs nothing but the prior's
// samples and the indicator. Before the chain is feasible it accepts a
// proposal when it violates no more triplets than the current state, which
// walks it into the feasible set; from then on it is plain ESS, whose
// stationary law is the posterior.
type posteriorSampler struct {
	x, nu, prop []float64 // n × dim, row-major
	n, dim      int
	ts          []triplet.Triplet
	rng         *rand.Rand
	violated    int
	byRow       [][]triplet.Triplet // the triplets that involve each row
	old         []float64
}

func newPosteriorSampler(start *mat.Dense, ts []triplet.Triplet, seed uint64) *posteriorSampler {
	n, dim := start.Dims()
	s := &posteriorSampler{n: n, dim: dim, ts: ts, rng: triplet.NewRand(seed)}
	s.x = slices.Clone(start.RawMatrix().Data)
	s.nu = make([]float64, len(s.x))
	s.prop = make([]float64, len(s.x))
	s.violated = s.violations(s.x)
	return s
}

func (s *posteriorSampler) violations(x []float64) int {
	v := 0
	for _, t := range s.ts {
		if !(s.sq(x, t.Anchor, t.Closer) < s.sq(x, t.Anchor, t.Farther)) {
			v++
		}
	}
	return v
}

func (s *posteriorSampler) sq(x []float64, i, j int) float64 {
	a, b := x[i*s.dim:(i+1)*s.dim], x[j*s.dim:(j+1)*s.dim]
	var d float64
	for k := range a {
		e := a[k] - b[k]
		d += e * e
	}
	return d
}

// step is one sweep of ESS updates, one row (point) at a time in a random
// order: the rows are independent under the prior, so the conditional prior
// of a row is N(0, I/20) again and ESS applies to it with only the triplets
// that involve it. This mixes far faster than moving all points at once.
func (s *posteriorSampler) step() {
	if s.byRow == nil {
		s.byRow = make([][]triplet.Triplet, s.n)
		for _, t := range s.ts {
			s.byRow[t.Anchor] = append(s.byRow[t.Anchor], t)
			s.byRow[t.Closer] = append(s.byRow[t.Closer], t)
			s.byRow[t.Farther] = append(s.byRow[t.Farther], t)
		}
		s.old = make([]float64, s.dim)
	}
	sd := 1 / math.Sqrt(20)
	for _, i := range s.rng.Perm(s.n) {
		row := s.x[i*s.dim : (i+1)*s.dim]
		copy(s.old, row)
		nu := s.nu[:s.dim]
		for k := range nu {
			nu[k] = sd * s.rng.NormFloat64()
		}
		before := s.rowViolations(i)
		theta := 2 * math.Pi * s.rng.Float64()
		lo, hi := theta-2*math.Pi, theta
		for {
			c, sn := math.Cos(theta), math.Sin(theta)
			for k := range row {
				row[k] = c*s.old[k] + sn*nu[k]
			}
			if v := s.rowViolations(i); v <= before {
				s.violated += v - before
				break
			}
			if theta < 0 {
				lo = theta
			} else {
				hi = theta
			}
			theta = lo + (hi-lo)*s.rng.Float64()
		}
	}
}

func (s *posteriorSampler) rowViolations(i int) int {
	v := 0
	for _, t := range s.byRow[i] {
		if !(s.sq(s.x, t.Anchor, t.Closer) < s.sq(s.x, t.Anchor, t.Farther)) {
			v++
		}
	}
	return v
}

// TestTable1BayesBound estimates, on the data of the Table 1 reproduction,
// the held-out error of the Bayes-optimal predictor: for each test question
// the answer that most posterior samples give. No embedding fitted to the
// training triplets alone can beat it on average over data sets drawn from
// the model, so it bounds what GNMDS, STE and t-STE can reach honestly. It
// also reports the error of a single posterior sample (a configuration as
// plausible as the truth, given the training triplets). Two chains per data
// set, started from two unregularised GNMDS fits, check the mixing: the test
// fails when their votes' errors differ by more than 4 standard errors, or
// when a chain ends with a violated training triplet.
//
//	go test ./internal/embed -run TestTable1BayesBound -reproduce -v -timeout 60m
func TestTable1BayesBound(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	for _, m := range []int{200, 1000} {
		type out struct{ bayes, bayesB, single, gnmds, ste, leak float64 }
		res := make([]out, *repSeeds)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for s := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				train, test := table1Data(uint64(s+1), m)
				rng := triplet.NewRand(uint64(7000 + s))
				rng.Shuffle(len(test), func(i, j int) { test[i], test[j] = test[j], test[i] })
				test = test[:min(*bayesTest, len(test))]
				agree := [2][]int{make([]int, len(test)), make([]int, len(test))}
				samples := [2]int{}
				for c := range 2 {
					fit, err := Fit(context.Background(), 100, train, Options{Params: GNMDSParams{Lambda: -1}, Dim: 10, Seed: uint64(5000 + 10*s + c)})
					if err != nil {
						panic(err)
					}
					// Rescale the fit to the prior's scale (the constraints do
					// not care about scale; the prior does).
					f := mat.Norm(fit.X, 2) / math.Sqrt(1000)
					fit.X.Scale(1/(math.Sqrt(20)*f), fit.X)
					ps := newPosteriorSampler(fit.X, train, uint64(9000+10*s+c))
					burn := *bayesIter / 4
					for it := range *bayesIter {
						ps.step()
						if it >= burn && ps.violated == 0 && it%*bayesThin == 0 {
							samples[c]++
							for i, tr := range test {
								if ps.sq(ps.x, tr.Anchor, tr.Closer) < ps.sq(ps.x, tr.Anchor, tr.Farther) {
									agree[c][i]++
								}
							}
						}
					}
					if ps.violated != 0 {
						t.Errorf("m=%d seed %d chain %d: still %d violations", m, s+1, c, ps.violated)
					}
				}
				var o out
				// The mixing check: if both chains sample the posterior, the
				// vote of chain A is wrong as often as that of chain B. The
				// per-question differences d_i = wrong_A − wrong_B have mean
				// 0 then; a chain stuck in its own region of the posterior
				// shifts the mean by far more than the sampling error of
				// the mean over the random test questions, sd(d)/√k.
				var dsum, dsq float64
				for i := range test {
					pa := float64(agree[0][i]) / float64(samples[0])
					pb := float64(agree[1][i]) / float64(samples[1])
					p := (pa + pb) / 2
					o.bayes += wrongIf(p)
					o.bayesB += (wrongIf(pa) + wrongIf(pb)) / 2
					o.single += 1 - p
					d := wrongIf(pa) - wrongIf(pb)
					dsum += d
					dsq += d * d
				}
				k := float64(len(test))
				if samples[0] == 0 || samples[1] == 0 {
					t.Errorf("m=%d seed %d: no feasible samples (%d, %d)", m, s+1, samples[0], samples[1])
				}
				dmean := dsum / k
				se := math.Sqrt(math.Max(dsq/k-dmean*dmean, 0) / k)
				if math.Abs(dmean) > 4*se+1/k {
					t.Errorf("m=%d seed %d: the chains' votes err on %.4f and %.4f of the questions, a difference of %.4f > 4 standard errors (%.4f): the chains have not mixed",
						m, s+1, o.bayesB/k+dmean/2, o.bayesB/k-dmean/2, dmean, 4*se)
				}
				o = out{bayes: o.bayes / k, bayesB: o.bayesB / k, single: o.single / k}
				// Our default fits, as in the Table 1 reproduction, and the
				// leaked-start fit that reproduces the reference.
				fit := func(meth Method, leak bool) float64 {
					opt := Options{Method: meth, Dim: 10, Seed: uint64(1000 + s)}
					if leak {
						opt.Params = paramsWith(meth, -1, 0, false)
						opt.Init = table1Points(uint64(s + 1))
						opt.Init.Scale(math.Sqrt(20)*opt.withDefaults().InitScale, opt.Init)
					}
					r, err := Fit(context.Background(), 100, train, opt)
					if err != nil {
						panic(err)
					}
					return TripletError(r.X, test)
				}
				o.gnmds, o.ste, o.leak = fit(GNMDS, false), fit(STE, false), fit(GNMDS, true)
				res[s] = o
				t.Logf("m=%d data seed %d: Bayes %.3f (chains alone %.3f), one posterior sample %.3f, samples %d+%d; GNMDS %.3f, STE %.3f, leaked-start GNMDS %.3f",
					m, s+1, o.bayes, o.bayesB, o.single, samples[0], samples[1], o.gnmds, o.ste, o.leak)
			}()
		}
		wg.Wait()
		var b, bb, sg, gn, st, lk []float64
		below := 0
		for _, r := range res {
			b, bb, sg = append(b, r.bayes), append(bb, r.bayesB), append(sg, r.single)
			gn, st, lk = append(gn, r.gnmds), append(st, r.ste), append(lk, r.leak)
			if r.leak < r.bayes {
				below++
			}
		}
		for _, v := range [][]float64{gn, st, lk} {
			slices.Sort(v)
		}
		slices.Sort(b)
		slices.Sort(bb)
		slices.Sort(sg)
		t.Logf("m=%d: Bayes-optimal held-out error min/median/max %.3f/%.3f/%.3f (per chain median %.3f); one posterior sample median %.3f",
			m, b[0], median(b), b[len(b)-1], median(bb), median(sg))
		t.Logf("m=%d: on the same test triplets, medians GNMDS %.3f, STE %.3f, leaked-start GNMDS %.3f (below the Bayes error on %d of %d data sets)",
			m, median(gn), median(st), median(lk), below, len(res))
	}
}

// wrongIf is the error of the majority answer when a fraction p of the
// posterior samples agree with the truth (a tie counts half).
func wrongIf(p float64) float64 {
	switch {
	case p > 0.5:
		return 0
	case p < 0.5:
		return 1
	}
	return 0.5
}
