package active

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// exact keeps every location of the posterior: the definition, unpruned.
var exact = ScoreConfig{PosteriorMass: 1, MaxSupport: -1}

// TestInfoGainByHand checks the score against a value worked out on paper:
// three items on a line at 0, 1 and 3, no answers (uniform posterior over
// the three positions), t-STE with α = 1 (q(d) = 1/(1 + d)), head 0 asked
// about 1 and 2. At the three locations p(1 ≺ 2) = q(1)/(q(1)+q(9)) = 5/6,
// q(0)/(q(0)+q(4)) = 5/6 and q(4)/(q(4)+q(0)) = 1/6, so P = 11/18 and
// I = H(11/18) − H(1/6) (H(5/6) = H(1/6)).
func TestInfoGainByHand(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	s, err := NewScorer(x, nil, exact)
	if err != nil {
		t.Fatal(err)
	}
	want := entropy(11.0/18) - entropy(1.0/6)
	got := s.InfoGain(1, 2, s.Posterior(nil, 0))
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("t-STE info gain %.15f, want H(11/18) − H(1/6) = %.15f", got, want)
	}
	if p := s.Probability(0, 1, 2); math.Abs(p-5.0/6) > 1e-12 {
		t.Errorf("p(1 ≺ 2 | 0) = %g, want 5/6", p)
	}
	if u := s.Uncertainty(0, 1, 2); math.Abs(u-1.0/6) > 1e-12 {
		t.Errorf("uncertainty %g, want 1/2 − |5/6 − 1/2| = 1/6", u)
	}
	// CKL, μ = 0.1: p = (μ + d_c)/(2μ + d_b + d_c) = 9.1/10.2, 4.1/4.2, 0.1/4.2.
	cfg := exact
	cfg.Model = CKL
	s, err = NewScorer(x, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := []float64{9.1 / 10.2, 4.1 / 4.2, 0.1 / 4.2}
	want = entropy((ps[0]+ps[1]+ps[2])/3) - (entropy(ps[0])+entropy(ps[1])+entropy(ps[2]))/3
	if got := s.InfoGain(1, 2, s.Posterior(nil, 0)); math.Abs(got-want) > 1e-12 || math.Abs(want-0.4695673098127596) > 1e-12 {
		t.Errorf("CKL info gain %.15f, want %.15f (0.469567309812760)", got, want)
	}
}

// bruteMutualInformation computes I(Y; L) from its definition,
// Σ_{ℓ,y} P(ℓ, y) ln(P(ℓ, y) / (P(ℓ) P(y))), with the posterior P(ℓ) over
// the items' positions built from the head's answers by Bayes' rule, every
// probability from the distances directly.
func bruteMutualInformation(x *mat.Dense, answers []triplet.Triplet, m Model, alpha, mu float64, a, b, c int) float64 {
	n, _ := x.Dims()
	sq := func(i, j int) float64 { return triplet.SqDist(x, i, j) }
	prob := func(l, b, c int) float64 { // p(b ≺ c | head at ℓ)
		qb, qc := 1/(mu+sq(l, b)), 1/(mu+sq(l, c))
		if m == TSTE {
			qb, qc = math.Pow(1+sq(l, b)/alpha, -(alpha+1)/2), math.Pow(1+sq(l, c)/alpha, -(alpha+1)/2)
		}
		return qb / (qb + qc)
	}
	post := make([]float64, n)
	var z float64
	for l := range n {
		post[l] = 1.0 / float64(n)
		for _, t := range answers {
			if t.Anchor == a {
				post[l] *= prob(l, t.Closer, t.Farther)
			}
		}
		z += post[l]
	}
	var py [2]float64
	joint := make([][2]float64, n)
	for l := range n {
		post[l] /= z
		p := prob(l, b, c)
		joint[l] = [2]float64{post[l] * p, post[l] * (1 - p)}
		py[0] += joint[l][0]
		py[1] += joint[l][1]
	}
	var mi float64
	for l := range n {
		for y := range 2 {
			if joint[l][y] > 0 {
				mi += joint[l][y] * math.Log(joint[l][y]/(post[l]*py[y]))
			}
		}
	}
	return mi
}

// TestInfoGainBruteForce compares the scorer with the definition of the
// mutual information on tiny random cases (3–5 items in 2-D, the head with
// a few answers, some of them wrong), both answer models.
func TestInfoGainBruteForce(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(7)
	for trial := range 40 {
		n := 3 + trial%3
		x := triplet.Gaussian(rng, n, 2, 1)
		o := triplet.NewOracle(x, 0.2, uint64(trial))
		answers := triplet.RandomTriplets(rng, o, 3*n)
		for _, m := range []Model{TSTE, CKL} {
			cfg := exact
			cfg.Model, cfg.Mu = m, 0.05
			s, err := NewScorer(x, answers, cfg)
			if err != nil {
				t.Fatal(err)
			}
			alpha := s.Config().Alpha
			for a := range n {
				support := s.Posterior(nil, a)
				if len(support) != n {
					t.Fatalf("unpruned posterior of %d has %d locations, want %d", a, len(support), n)
				}
				for b := range n {
					for c := b + 1; c < n; c++ {
						if b == a || c == a {
							continue
						}
						want := bruteMutualInformation(x, answers, m, alpha, 0.05, a, b, c)
						if got := s.InfoGain(b, c, support); math.Abs(got-want) > 1e-10 {
							t.Errorf("trial %d, %s, (%d; %d, %d): info gain %.12f, definition %.12f", trial, m, a, b, c, got, want)
						}
					}
				}
			}
		}
	}
}

// TestPosteriorPruning checks that the pruned posterior keeps the most
// probable locations, in order, until the mass or the cap is reached, and
// sums to 1.
func TestPosteriorPruning(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(3)
	x := triplet.Gaussian(rng, 40, 2, 1)
	answers := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, 3), 2000)
	full, err := NewScorer(x, answers, exact)
	if err != nil {
		t.Fatal(err)
	}
	all := full.Posterior(nil, 5)
	for _, cfg := range []ScoreConfig{{PosteriorMass: 0.9, MaxSupport: -1}, {PosteriorMass: 1, MaxSupport: 3}, {}} {
		s, err := NewScorer(x, answers, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Posterior(nil, 5)
		var kept, sum float64
		for i, l := range got {
			if l.Item != all[i].Item {
				t.Fatalf("%+v: location %d is item %d, the full posterior's is %d", cfg, i, l.Item, all[i].Item)
			}
			kept += all[i].Weight
			sum += l.Weight
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%+v: weights sum to %g", cfg, sum)
		}
		c := s.Config()
		enough := kept >= c.PosteriorMass-1e-12 || len(got) == c.MaxSupport
		lessWouldDo := len(got) > 1 && kept-all[len(got)-1].Weight >= c.PosteriorMass
		if !enough || lessWouldDo {
			t.Errorf("%+v: kept %d locations holding %.4f", cfg, len(got), kept)
		}
	}
	if all[0].Item != 5 && triplet.SqDist(x, all[0].Item, 5) > 0.5 {
		t.Errorf("after 2,000 answers the head's most probable location is item %d, far from it", all[0].Item)
	}
}

// TestBestIsTheMaximum checks Best against scoring every pair: with
// Candidates at least the number of pairs, it returns the top questions
// of all, best first, none of them already answered.
func TestBestIsTheMaximum(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(11)
	x := triplet.Gaussian(rng, 12, 2, 1)
	answers := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 11), 150)
	asked := map[triplet.Key]bool{}
	for _, t := range answers {
		asked[triplet.KeyOf(t)] = true
	}
	for _, rule := range []Rule{InfoGain, Uncertainty} {
		s, err := NewScorer(x, answers, ScoreConfig{Rule: rule, Candidates: 100})
		if err != nil {
			t.Fatal(err)
		}
		for a := range 12 {
			support := s.Posterior(nil, a)
			var all []float64
			for b := range 12 {
				for c := b + 1; c < 12; c++ {
					if b == a || c == a || asked[triplet.Key{Anchor: a, J: b, K: c}] {
						continue
					}
					if rule == InfoGain {
						all = append(all, s.InfoGain(b, c, support))
					} else {
						all = append(all, s.Uncertainty(a, b, c))
					}
				}
			}
			slices.Sort(all)
			slices.Reverse(all)
			best := s.Best(nil, a, 4, 1)
			if len(best) != 4 {
				t.Fatalf("%s head %d: %d questions, want 4", rule, a, len(best))
			}
			for i, q := range best {
				if q.Key.Anchor != a || asked[q.Key] {
					t.Errorf("%s head %d: question %v is for another head or already answered", rule, a, q.Key)
				}
				if q.Score != all[i] {
					t.Errorf("%s head %d: rank %d scores %g, the exhaustive rank %d %g", rule, a, i, q.Score, i, all[i])
				}
			}
		}
	}
}

// TestPoolDeterministic checks that a pool depends only on its input and
// seed: not on the number of workers; and that another seed draws other
// candidates when they are sampled.
func TestPoolDeterministic(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(5)
	x := triplet.Gaussian(rng, 200, 2, 1)
	answers := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 5), 2000)
	heads := []int{3, 4, 5, 6, 7, 199}
	pool := func(workers int, seed uint64) []Question {
		q, err := Pool(nil, x, answers, heads, 3, ScoreConfig{Candidates: 50, Workers: workers}, seed)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	one := pool(1, 9)
	if len(one) != 18 {
		t.Fatalf("%d questions, want 6 heads × 3", len(one))
	}
	if !slices.Equal(one, pool(4, 9)) || !slices.Equal(one, pool(1, 9)) {
		t.Error("the same seed gave different pools")
	}
	if slices.Equal(one, pool(1, 10)) {
		t.Error("another seed gave the same pool")
	}
	// Round robin order: rank r of every head, in the order of heads.
	for i, q := range one {
		if q.Key.Anchor != heads[i%len(heads)] {
			t.Errorf("pool question %d is for head %d, want %d", i, q.Key.Anchor, heads[i%len(heads)])
		}
	}
}

func TestScorerRejectsBadInput(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	for _, c := range []struct {
		name    string
		x       *mat.Dense
		answers []triplet.Triplet
		cfg     ScoreConfig
	}{
		{"answer outside the items", x, []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 3}}, ScoreConfig{}},
		{"two items", mat.NewDense(2, 1, []float64{0, 1}), nil, ScoreConfig{}},
		{"NaN coordinate", mat.NewDense(3, 1, []float64{0, math.NaN(), 2}), nil, ScoreConfig{}},
		{"unknown model", x, nil, ScoreConfig{Model: "soe"}},
		{"unknown rule", x, nil, ScoreConfig{Rule: "margin"}},
		{"negative candidates", x, nil, ScoreConfig{Candidates: -1}},
		{"mass above 1", x, nil, ScoreConfig{PosteriorMass: 1.5}},
	} {
		if _, err := NewScorer(c.x, c.answers, c.cfg); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := Pool(nil, x, nil, []int{3}, 1, ScoreConfig{}, 1); err == nil {
		t.Error("head outside the items: no error")
	}
}
