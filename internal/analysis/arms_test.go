package analysis

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// An arm whose answers come from the oracle is judged far better on the
// held-out answers than an arm whose answers are coin flips; Wrong counts
// what HeldoutError divides.
func TestFitArm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := triplet.NewRand(4)
	const n = 20
	x := triplet.Gaussian(rng, n, 2, 1)
	o := triplet.NewOracle(x, 0, 5)
	coin := triplet.NewOracle(x, 0.5, 6) // each answer right with probability 1/2
	good := triplet.RandomTriplets(rng, o, 600)
	bad := triplet.RandomTriplets(rng, coin, 600)
	test := triplet.RandomTriplets(rng, o, 400)
	s := Settings{Seed: 1}
	g, err := FitArm(ctx, n, good, test, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitArm(ctx, n, bad, test, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Heldout != 400 || g.HeldoutError != float64(g.Wrong)/400 {
		t.Fatalf("good arm: %d judged, %d wrong, error %g", g.Heldout, g.Wrong, g.HeldoutError)
	}
	if g.HeldoutError > 0.15 || b.HeldoutError < 0.3 {
		t.Fatalf("held-out errors: informative %.3f, coin flips %.3f", g.HeldoutError, b.HeldoutError)
	}
	// A warm start from the fit itself ends where it started, nearly.
	w, err := FitArm(ctx, n, good, test, s, g.Embedding)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.HeldoutError-g.HeldoutError) > 0.03 {
		t.Fatalf("warm-started: %.3f, from %.3f", w.HeldoutError, g.HeldoutError)
	}
	// A previous fit far from the answers (the points folded along an
	// axis and spread 10,000 times wider, as t-STE fits in two dimensions
	// are) does not hold the fit back: the random start wins.
	folded := mat.NewDense(n, 2, nil)
	for i := range n {
		u, v := x.At(i, 0), x.At(i, 1)
		if u > 0 {
			v = -v
		}
		folded.Set(i, 0, 1e4*u)
		folded.Set(i, 1, 1e4*v)
	}
	f, err := FitArm(ctx, n, good, test, s, folded)
	if err != nil {
		t.Fatal(err)
	}
	onlyWarm, err := embed.Fit(ctx, n, good, embed.Options{Seed: 1, Init: folded})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("from the folded points: kept the warm start %v, error %.3f; the warm start alone %.3f", f.Warm, f.HeldoutError, embed.TripletError(onlyWarm.X, test))
	if f.HeldoutError > g.HeldoutError+0.03 || f.Loss > onlyWarm.Loss {
		t.Fatalf("from the folded points: error %.3f (random start %.3f), loss %g (warm start alone %g)", f.HeldoutError, g.HeldoutError, f.Loss, onlyWarm.Loss)
	}
	// No held-out answers: no error; no answers: refused.
	if f, err := FitArm(ctx, n, good, nil, s, nil); err != nil || !math.IsNaN(f.HeldoutError) || f.Heldout != 0 {
		t.Fatalf("without held-out answers: %+v %v", f, err)
	}
	if _, err := FitArm(ctx, n, nil, test, s, nil); err == nil {
		t.Fatal("an arm without answers was fitted")
	}
	// Wrong: a tie and an item the points lack count as wrong.
	p := mat.NewDense(3, 1, []float64{0, 1, -1})
	if got := Wrong(p, []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 2}, {Anchor: 1, Closer: 0, Farther: 2}, {Anchor: 0, Closer: 1, Farther: 5}}); got != 2 {
		t.Fatalf("Wrong = %d, want 2 (a tie, an unknown item)", got)
	}
}
