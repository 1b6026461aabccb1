package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// TrialOracle is a simulated crowd answering the formats beyond the
// triplet (issue 27) from the Euclidean distances between the rows of X,
// by each format's choice rule with noise:
//
//   - odd-one-out: the item left out of the closest pair; with
//     probability P one of the other two instead, each as likely (a wrong
//     answer, as triplet.Oracle's P);
//   - rank: the k choices one at a time, each the remaining reference
//     nearest the query (the sequential choice rule of Plackett–Luce in
//     its noise-free limit); with probability P, independently at each
//     step, a uniformly random other remaining reference instead.
//
// With Temperature T > 0 the choices are instead drawn from the choice
// models themselves on a Gaussian similarity s = −d²/T (d the Euclidean
// distance): odd-one-out by the softmax over the three pairs (SPoSE's
// rule), rank by the sequential Luce rule (psiz's) — graded noise, most
// where the distances are close; P then adds wrong answers as above.
//
// Ties in distance go to the earlier item shown. With one goroutine its
// answers are deterministic for a seed; it is not safe for concurrent use.
type TrialOracle struct {
	X           *mat.Dense
	P           float64
	Temperature float64
	rng         *rand.Rand
}

// best returns the index of the smallest of d (the first on ties), or,
// with a temperature, an index drawn with probability ∝ exp(−d_i/T).
func (o *TrialOracle) best(d []float64) int {
	b := 0
	for i := 1; i < len(d); i++ {
		if d[i] < d[b] {
			b = i
		}
	}
	if o.Temperature <= 0 {
		return b
	}
	var sum float64
	w := make([]float64, len(d))
	for i, v := range d {
		w[i] = math.Exp(-(v - d[b]) / o.Temperature)
		sum += w[i]
	}
	u := o.rng.Float64() * sum
	for i, v := range w {
		if u < v {
			return i
		}
		u -= v
	}
	return len(d) - 1
}

// NewTrialOracle returns an oracle over the points x, wrong with
// probability p at each choice.
func NewTrialOracle(x *mat.Dense, p float64, seed uint64) *TrialOracle {
	return &TrialOracle{X: x, P: p, rng: triplet.NewRand(seed)}
}

func (o *TrialOracle) wrong() bool { return o.P > 0 && o.rng.Float64() < o.P }

// OddOneOut answers the odd-one-out trial showing items.
func (o *TrialOracle) OddOneOut(items [3]int) trial.OddOneOut {
	a, b, c := items[0], items[1], items[2]
	// d[k] is the squared distance of the pair without item k; the odd
	// one is the item left out of the closest pair.
	d := [3]float64{triplet.SqDist(o.X, b, c), triplet.SqDist(o.X, a, c), triplet.SqDist(o.X, a, b)}
	odd := o.best(d[:])
	if o.wrong() {
		odd = (odd + 1 + o.rng.IntN(2)) % 3
	}
	return trial.OddOneOut{Items: items, Odd: items[odd]}
}

// Rank answers the rank trial of query and options with k choices. The
// options are kept (not copied) in the trial.
func (o *TrialOracle) Rank(query int, options []int, k int) trial.Rank {
	left := append([]int(nil), options...)
	choices := make([]int, 0, k)
	d := make([]float64, 0, len(options))
	for range k {
		d = d[:0]
		for _, l := range left {
			d = append(d, triplet.SqDist(o.X, query, l))
		}
		best := o.best(d)
		if o.wrong() {
			best = (best + 1 + o.rng.IntN(len(left)-1)) % len(left)
		}
		choices = append(choices, left[best])
		left = append(left[:best], left[best+1:]...)
	}
	return trial.Rank{Query: query, Options: options, Choices: choices}
}

// RandomOddOneOut returns m uniformly random odd-one-out trials (three
// distinct items in random display order) answered by o: the random
// design of the format.
func RandomOddOneOut(rng *rand.Rand, o *TrialOracle, m int) []trial.OddOneOut {
	n, _ := o.X.Dims()
	ts := make([]trial.OddOneOut, m)
	for k := range ts {
		a, b, c := triplet.RandomQuestion(rng, n)
		ts[k] = o.OddOneOut([3]int{a, b, c})
	}
	return ts
}

// RandomRank returns m uniformly random rank trials of size s (a query
// and s.N distinct other references in random order) answered by o.
func RandomRank(rng *rand.Rand, o *TrialOracle, s trial.RankSpec, m int) []trial.Rank {
	n, _ := o.X.Dims()
	if s.N+1 > n {
		panic(fmt.Sprintf("simulate: RandomRank: %s needs %d items, have %d", s, s.N+1, n))
	}
	ts := make([]trial.Rank, m)
	opts := make([]int, m*s.N)
	pick := make([]int, 0, s.N+1)
	for k := range ts {
		pick = pick[:0]
		for len(pick) < s.N+1 { // rejection: s.N+1 ≤ 10 draws, n usually far larger
			v := rng.IntN(n)
			dup := false
			for _, p := range pick {
				if p == v {
					dup = true
					break
				}
			}
			if !dup {
				pick = append(pick, v)
			}
		}
		o2 := opts[k*s.N : (k+1)*s.N : (k+1)*s.N]
		copy(o2, pick[1:])
		ts[k] = o.Rank(pick[0], o2, s.K)
	}
	return ts
}

// Trials are the answered trials of one format: Odd for odd-one-out, Rank
// for rank (the other nil).
type Trials struct {
	Odd  []trial.OddOneOut
	Rank []trial.Rank
}

// Len is the number of trials.
func (t Trials) Len() int { return len(t.Odd) + len(t.Rank) }

// Head returns the first m trials.
func (t Trials) Head(m int) Trials {
	if t.Odd != nil {
		return Trials{Odd: t.Odd[:m]}
	}
	return Trials{Rank: t.Rank[:m]}
}

// Triplets returns the derived triplets of the trials (trial.OddTriplets,
// trial.RankTriplets).
func (t Trials) Triplets() []triplet.Triplet {
	if t.Odd != nil {
		return trial.OddTriplets(t.Odd)
	}
	return trial.RankTriplets(t.Rank)
}

// FormatQuality is a fit of one format's trials judged against the truth.
type FormatQuality struct {
	// Score is the format's own held-out score on the test trials (the
	// crowd's, as noisy as the training ones): odd-one-out accuracy or
	// rank top-1 accuracy.
	Score float64
	// TestTripletError is the error on the test trials' derived triplets.
	TestTripletError float64
	// Heldout is the triplet error on truth.Heldout (fresh, noise-free).
	Heldout float64
	// Tau is the mean Kendall tau of the fit against the true points.
	Tau float64
}

// AssessTrials fits train (natively, by embed.FitOddOneOut or
// embed.FitRank, or by t-STE on the derived triplets when native is
// false) with opt and judges the normalised fit on test and truth.
func AssessTrials(ctx context.Context, truth Truth, train, test Trials, native bool, opt embed.Options) (FormatQuality, error) {
	n, _ := truth.X.Dims()
	var res *embed.Result
	var err error
	switch {
	case !native:
		res, err = embed.Fit(ctx, n, train.Triplets(), opt)
	case train.Odd != nil:
		res, err = embed.FitOddOneOut(ctx, n, train.Odd, opt)
	default:
		res, err = embed.FitRank(ctx, n, train.Rank, opt)
	}
	if err != nil {
		return FormatQuality{}, err
	}
	var z mat.Dense
	embed.Normalize(&z, res.X)
	q := FormatQuality{
		TestTripletError: embed.TripletError(&z, test.Triplets()),
		Heldout:          embed.TripletError(&z, truth.Heldout),
		Tau:              embed.MeanKendallTau(truth.X, &z),
	}
	if test.Odd != nil {
		q.Score = embed.OddOneOutAccuracy(&z, test.Odd)
	} else {
		q.Score = embed.RankTop1Accuracy(&z, test.Rank)
	}
	return q, nil
}
