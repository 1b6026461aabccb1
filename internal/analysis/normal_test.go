package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestRecomputeEmbeddingNormalFormAndStart: the embedding a run stores is
// in the normal form of embed.Normalize (centred, unit root-mean-square
// radius, so every coordinate within ±√n), and a previous run's embedding
// in a wrong order does not trap the next fit: on a line of 40 items
// (1,500 answers, 10 % wrong, a fifth held out) the fit of an early run
// (the first 200 answers, one random start, seed 5), kept as the only start
// of a 1-D t-STE fit of all answers, leaves its wrong order in place
// (held-out error 0.392), while the run, which also fits from the default
// start, errs on 0.152 (the 10 % wrong held-out answers included).
func TestRecomputeEmbeddingNormalFormAndStart(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(8)
	x := triplet.UniformCube(rng, 40, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 8), 1500)
	s := Settings{Dim: 1, Seed: 2, HoldoutFrac: 0.2}
	cold, err := Recompute(context.Background(), Input{N: 40, Triplets: ts}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := cold.Embedding
	var sum float64
	for i := range 40 {
		sum += e.At(i, 0)
	}
	if r := embed.RMSRadius(e); math.Abs(r-1) > 1e-9 || math.Abs(sum) > 1e-9 {
		t.Errorf("stored embedding: RMS radius %g, sum %g; want 1 and 0", r, sum)
	}
	early, err := embed.Fit(context.Background(), 40, ts[:200], embed.Options{Dim: 1, Seed: 5, Start: embed.StartRandom, Starts: 1})
	if err != nil {
		t.Fatal(err)
	}
	prev := early.X
	warm, err := Recompute(context.Background(), Input{N: 40, Triplets: ts, Prev: prev}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	train, test, _ := holdout(Input{N: 40, Triplets: ts}, s.withDefaults())
	only, err := embed.Fit(context.Background(), 40, train, embed.Options{Dim: 1, Seed: 2, Init: prev})
	if err != nil {
		t.Fatal(err)
	}
	trapped := embed.TripletError(only.X, test)
	t.Logf("held-out error %.4f cold, %.4f with the early run's embedding, %.4f from it alone", cold.HeldoutError, warm.HeldoutError, trapped)
	if trapped < 0.2 {
		t.Errorf("the early run's embedding alone reaches %.4f: the test no longer shows a trap", trapped)
	}
	if cold.HeldoutError > 0.2 || warm.HeldoutError > cold.HeldoutError+0.01 {
		t.Errorf("held-out error %.4f from the default start, %.4f with the early run's embedding; want ≤ 0.2 and no worse", cold.HeldoutError, warm.HeldoutError)
	}
}

// TestRecomputeChainBounded: the study (36 items, 929 answers,
// t-STE in 2-D, every run warm-started from the one before) had stored
// coordinates of ±1e10. Simulated here (36 points uniform in the unit
// square, answers 10 % wrong, runs after 50, 100, 200, …, 929 answers),
// the runs before issue 28 stored coordinates up to 5.6e5 after 50 answers
// and 4.5e6 after 929; every stored embedding now stays within ±10.
func TestRecomputeChainBounded(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(5)
	x := triplet.UniformCube(rng, 36, 2)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 5), 929)
	in := Input{N: 36}
	for _, k := range []int{50, 100, 200, 400, 600, 800, 929} {
		in.Triplets = ts[:k]
		res, err := Recompute(context.Background(), in, Settings{Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		in.Prev = res.Embedding
		var big float64
		for _, v := range res.Embedding.RawMatrix().Data {
			big = math.Max(big, math.Abs(v))
		}
		t.Logf("after %d answers: stored coordinates up to %.3g", k, big)
		if !(big <= 10) {
			t.Errorf("after %d answers: stored coordinates up to %.3g, want within ±10", k, big)
		}
	}
}
