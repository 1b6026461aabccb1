package embed

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// randomOdd returns m odd-one-out trials over n items answered without
// noise by the points x (the item left out of the closest pair).
func randomOdd(rng *rand.Rand, x *mat.Dense, m int) []trial.OddOneOut {
	n, _ := x.Dims()
	ts := make([]trial.OddOneOut, m)
	for k := range ts {
		a, b, c := triplet.RandomQuestion(rng, n)
		dab, dac, dbc := triplet.SqDist(x, a, b), triplet.SqDist(x, a, c), triplet.SqDist(x, b, c)
		odd := c
		if dac < dab && dac < dbc {
			odd = b
		} else if dbc < dab && dbc < dac {
			odd = a
		}
		ts[k] = trial.OddOneOut{Items: [3]int{a, b, c}, Odd: odd}
	}
	return ts
}

// randomRank returns m rank trials of size s answered without noise (the
// k nearest references in order).
func randomRank(rng *rand.Rand, x *mat.Dense, s study.RankSpec, m int) []trial.Rank {
	n, _ := x.Dims()
	ts := make([]trial.Rank, m)
	for k := range ts {
		perm := rng.Perm(n)[:s.N+1]
		q, opts := perm[0], perm[1:]
		ch := append([]int(nil), opts...)
		for r := range s.K { // selection sort of the k nearest
			for o := r + 1; o < len(ch); o++ {
				if triplet.SqDist(x, q, ch[o]) < triplet.SqDist(x, q, ch[r]) {
					ch[r], ch[o] = ch[o], ch[r]
				}
			}
		}
		ts[k] = trial.Rank{Query: q, Options: opts, Choices: ch[:s.K]}
	}
	return ts
}

// oddLossDirect is −log P(odd) of one trial computed from its definition
// (the softmax over the three pairs' log-kernel similarities), for the
// check of oddChunk's rearranged form.
func oddLossDirect(x []float64, d int, i, j, k int, alpha float64) float64 {
	sq := func(a, b int) float64 {
		var s float64
		for c := range d {
			u := x[a*d+c] - x[b*d+c]
			s += u * u
		}
		return s
	}
	s := func(dd float64) float64 { return -(alpha + 1) / 2 * math.Log(1+dd/alpha) }
	sij, sik, sjk := s(sq(i, j)), s(sq(i, k)), s(sq(j, k))
	return -sij + math.Log(math.Exp(sij)+math.Exp(sik)+math.Exp(sjk))
}

// rankLossDirect is −log P(choices) of one rank record (query, options in
// the order ranked) from the Plackett–Luce product.
func rankLossDirect(x []float64, d int, rec []int32, k int, alpha float64) float64 {
	q := func(a, b int32) float64 {
		var s float64
		for c := range d {
			u := x[int(a)*d+c] - x[int(b)*d+c]
			s += u * u
		}
		return math.Pow(1+s/alpha, -(alpha+1)/2)
	}
	var loss float64
	for r := range k {
		var den float64
		for _, o := range rec[1+r:] {
			den += q(rec[0], o)
		}
		loss -= math.Log(q(rec[0], rec[1+r]) / den)
	}
	return loss
}

// TestNativeLossMatchesDefinition: the chunk functions' losses equal
// −log P summed over trials computed straight from the models'
// definitions (trials.go's comment), for α = 1, 2 (powE's exact branches)
// and 3.7 (math.Pow).
func TestNativeLossMatchesDefinition(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(41)
	const n, d = 12, 3
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	odd := randomOdd(rng, triplet.Gaussian(rng, n, d, 1), 30) // answers of other points: a mix of likely and unlikely
	spec := study.RankSpec{N: 5, K: 2}
	ranks := randomRank(rng, triplet.Gaussian(rng, n, d, 1), spec, 30)
	for _, alpha := range []float64{1, 2, 3.7} {
		var tr []int32
		var want float64
		for _, o := range odd {
			i, j := o.Pair()
			tr = append(tr, int32(i), int32(j), int32(o.Odd))
			want += oddLossDirect(x, d, i, j, o.Odd, alpha)
		}
		g := make([]float64, n*d)
		if got := oddChunk(alpha)(x, d, tr, g); math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("odd-one-out α=%g: loss %.12g, definition %.12g", alpha, got, want)
		}
		tr, want = tr[:0], 0
		for _, r := range ranks {
			rec := []int32{int32(r.Query)}
			for _, o := range r.Ordered(nil) {
				rec = append(rec, int32(o))
			}
			tr = append(tr, rec...)
			want += rankLossDirect(x, d, rec, spec.K, alpha)
		}
		clear(g)
		if got := rankChunk(alpha, spec.N, spec.K)(x, d, tr, g); math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("rank α=%g: loss %.12g, definition %.12g", alpha, got, want)
		}
	}
}

// TestNativeGradients checks the odd-one-out and rank gradients (with the
// regulariser) against central finite differences, as TestGradientsAllDims
// does for the triplet losses: 1, 2 and 3 dimensions, 7 points at random
// positions, 20 trials answered by other random points, α = 1, 2, 3.7.
func TestNativeGradients(t *testing.T) {
	t.Parallel()
	const n = 7
	rng := triplet.NewRand(43)
	odd := randomOdd(rng, triplet.Gaussian(rng, n, 2, 1), 20)
	var oddTr []int32
	for _, o := range odd {
		i, j := o.Pair()
		oddTr = append(oddTr, int32(i), int32(j), int32(o.Odd))
	}
	spec := study.RankSpec{N: 4, K: 2}
	var rankTr []int32
	for _, r := range randomRank(rng, triplet.Gaussian(rng, n, 2, 1), spec, 20) {
		rankTr = append(rankTr, int32(r.Query))
		for _, o := range r.Ordered(nil) {
			rankTr = append(rankTr, int32(o))
		}
	}
	for _, d := range []int{1, 2, 3} {
		for _, alpha := range []float64{1, 2, 3.7} {
			x := make([]float64, n*d)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			ev := newStridedEvaluator(n, d, oddTr, 3, oddChunk(alpha), 0.3, 1)
			checkGradient(t, fmt.Sprintf("odd-one-out d=%d α=%g", d, alpha), ev, x, 1e-6, 1e-6)
			ev = newStridedEvaluator(n, d, rankTr, 1+spec.N, rankChunk(alpha, spec.N, spec.K), 0.3, 1)
			checkGradient(t, fmt.Sprintf("rank d=%d α=%g", d, alpha), ev, x, 1e-6, 1e-6)
		}
	}
}

func TestPowE(t *testing.T) {
	t.Parallel()
	for _, e := range []float64{0.5, 1, 1.5, 2, 5, 9.5, 20, 20.5, 2.35} {
		for _, v := range []float64{0.01, 0.7, 1, 3.3} {
			if got, want := powE(v, e), math.Pow(v, e); math.Abs(got-want) > 1e-13*want {
				t.Errorf("powE(%g, %g) = %g, want %g", v, e, got, want)
			}
		}
	}
}

// TestFitNativeRecovers: native fits of noise-free trials over 60 points
// of a 2-D Gaussian predict held-out trials: odd-one-out accuracy and
// rank top-1 accuracy well above chance (1/3 and 1/8), derived triplet
// error low, and the normal form bounded (Normalize: RMS radius 1, no
// coordinate beyond √n). The thresholds are a margin under what these
// seeds give (odd-one-out .843, rank top-1 .810 and triplet error .055
// when written).
func TestFitNativeRecovers(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(47)
	const n = 60
	truth := triplet.Gaussian(rng, n, 2, 1)
	odd := randomOdd(rng, truth, 1500)
	res, err := FitOddOneOut(context.Background(), n, odd[:1200], Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var z mat.Dense
	Normalize(&z, res.X)
	acc := OddOneOutAccuracy(&z, odd[1200:])
	t.Logf("odd-one-out held-out accuracy %.3f", acc)
	if acc < 0.75 {
		t.Errorf("odd-one-out held-out accuracy %.3f < .75", acc)
	}
	checkBounded(t, &z, n)

	spec := study.RankSpec{N: 8, K: 2}
	ranks := randomRank(rng, truth, spec, 500)
	res, err = FitRank(context.Background(), n, ranks[:400], Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	Normalize(&z, res.X)
	acc = RankTop1Accuracy(&z, ranks[400:])
	e := TripletError(&z, trial.RankTriplets(ranks[400:]))
	t.Logf("rank top-1 held-out accuracy %.3f, derived triplet error %.3f", acc, e)
	if acc < 0.6 {
		t.Errorf("rank top-1 held-out accuracy %.3f < .6", acc)
	}
	if e > 0.12 {
		t.Errorf("rank derived triplet error %.3f > .12", e)
	}
	checkBounded(t, &z, n)

	if _, err := FitOddOneOut(context.Background(), n, odd, Options{Method: STE}); err == nil {
		t.Error("a native fit with STE's parameters accepted")
	}
	bad := []trial.OddOneOut{{Items: [3]int{0, 1, 1}, Odd: 0}}
	if _, err := FitOddOneOut(context.Background(), n, bad, Options{}); err == nil {
		t.Error("a trial repeating an item accepted")
	}
}

func checkBounded(t *testing.T, z *mat.Dense, n int) {
	t.Helper()
	if r := RMSRadius(z); math.Abs(r-1) > 1e-9 {
		t.Errorf("RMS radius %g", r)
	}
	if m := mat.Max(z); m > math.Sqrt(float64(n)) {
		t.Errorf("coordinate %g beyond √n", m)
	}
}
