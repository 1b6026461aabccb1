package embed

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// randomProblem returns n random points in d dimensions and m noise-free
// random triplets over them.
func randomProblem(seed uint64, n, d, m int) (*mat.Dense, []triplet.Triplet) {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, n, d, 1)
	return x, triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, seed), m)
}

// TestTSTEFarFromSafe checks that t-STE's loss stays finite and its
// gradient bounded for a strongly violated triplet at a large scale (no log
// of 0, no Inf/Inf).
func TestTSTEFarFromSafe(t *testing.T) {
	t.Parallel()
	x := []float64{0, 0, 1e150, 0, 1, 0} // d(0,1) huge, d(0,2) = 1: violated
	tr := []int32{0, 1, 2}
	for _, alpha := range []float64{1, 2, 9} {
		g := make([]float64, 6)
		f := tsteChunk(alpha)(x, 2, tr, g)
		if math.IsInf(f, 0) || math.IsNaN(f) || f <= 0 {
			t.Errorf("α=%g: loss %g, want finite positive", alpha, f)
		}
		for _, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("α=%g: gradient %v not finite", alpha, g)
			}
		}
	}
}

// TestChunkingIndependentOfWorkers: the parallel evaluation gives bitwise
// the same loss and gradient with 1 and 2 workers (several chunks).
func TestChunkingIndependentOfWorkers(t *testing.T) {
	t.Parallel()
	const n, d, m = 200, 2, 5 * minChunk
	_, ts := randomProblem(3, n, d, m)
	tr := flatten(ts)
	x := make([]float64, n*d)
	rng := triplet.NewRand(4)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for _, meth := range []Method{STE, TSTE, GNMDS, CKL, SOE} {
		f, lambda := chunkFor(Options{Method: meth, Dim: d}.withDefaults())
		g1 := make([]float64, n*d)
		g2 := make([]float64, n*d)
		e1 := newEvaluator(n, d, tr, f, lambda, 1)
		if len(e1.losses) < 2 {
			t.Fatalf("want several chunks, have %d", len(e1.losses))
		}
		f1 := e1.eval(x, g1)
		f2 := newEvaluator(n, d, tr, f, lambda, 2).eval(x, g2)
		if f1 != f2 || !slices.Equal(g1, g2) {
			t.Errorf("%s: 1 worker gives %v, 2 workers %v", meth, f1, f2)
		}
	}
}

// TestMethodsRecover: every method embeds 30 points in 2-D from 3,000
// noise-free triplets with a low training and held-out triplet error. The
// bounds are loose (an embedding from random points errs on about half).
func TestMethodsRecover(t *testing.T) {
	t.Parallel()
	x, ts := randomProblem(5, 30, 2, 4000)
	train, test := Split(ts, 0.25, 6)
	for _, meth := range Methods {
		res, err := Fit(context.Background(), 30, train, Options{Method: meth, Dim: 2, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		tre, tee := TripletError(res.X, train), TripletError(res.X, test)
		tau := MeanKendallTau(x, res.X)
		t.Logf("%s: train %.3f test %.3f tau %.3f iterations %d", meth, tre, tee, tau, res.Iterations)
		// DMOE fits a convex relaxation and keeps the top two eigenpairs
		// of G, which costs it accuracy in two dimensions.
		maxErr, minTau := 0.08, 0.8
		if meth == DMOE {
			maxErr, minTau = 0.15, 0.7
		}
		if tre > maxErr || tee > maxErr+0.02 || tau < minTau {
			t.Errorf("%s: train error %.3f, held-out %.3f, mean tau %.3f; want ≤ %g, ≤ %g, ≥ %g", meth, tre, tee, tau, maxErr, maxErr+0.02, minTau)
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(8, 25, 2, 600)
	for _, meth := range Methods {
		opt := Options{Method: meth, Dim: 2, Seed: 9, MaxIter: 50}
		a, err := Fit(context.Background(), 25, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Fit(context.Background(), 25, ts, opt)
		if !mat.Equal(a.X, b.X) || a.Loss != b.Loss {
			t.Errorf("%s: two runs with seed 9 differ", meth)
		}
		opt.Seed = 10
		c, _ := Fit(context.Background(), 25, ts, opt)
		if mat.Equal(a.X, c.X) {
			t.Errorf("%s: seeds 9 and 10 give the same points", meth)
		}
	}
}

// TestWarmStart: a run started from a converged embedding starts at its
// loss (the first progress report is no worse) and keeps its quality.
func TestWarmStart(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(11, 25, 2, 1500)
	for _, meth := range Methods {
		first, err := Fit(context.Background(), 25, ts, Options{Method: meth, Dim: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var losses []float64
		iters := 3
		if meth == DMOE {
			iters = 0 // ADMM moves off its start before its multipliers settle
		}
		again, err := Fit(context.Background(), 25, ts, Options{Method: meth, Dim: 2, Seed: 2, Init: first.X, MaxIter: iters,
			Progress: func(_ int, f float64) { losses = append(losses, f) }})
		if err != nil {
			t.Fatal(err)
		}
		e1, e2 := TripletError(first.X, ts), TripletError(again.X, ts)
		if e2 > e1+0.02 {
			t.Errorf("%s: warm start error %.3f, was %.3f", meth, e2, e1)
		}
		if meth == DMOE {
			continue
		}
		if len(losses) == 0 {
			t.Errorf("%s: no progress reported in %d iterations from the warm start", meth, iters)
			continue
		}
		if losses[0] > first.Loss*(1+1e-9)+1e-12 {
			t.Errorf("%s: warm start's first loss %g above the converged %g", meth, losses[0], first.Loss)
		}
	}
}

func TestCancelAndProgress(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(12, 40, 2, 3000)
	for _, meth := range Methods {
		ctx, cancel := context.WithCancel(context.Background())
		var iters []int
		_, err := Fit(ctx, 40, ts, Options{Method: meth, Dim: 2, Seed: 1, Tol: 1e-15, Progress: func(it int, _ float64) {
			iters = append(iters, it)
			if it == 3 {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want context.Canceled", meth, err)
		}
		if len(iters) < 3 || len(iters) > 4 || iters[0] != 1 || iters[1] != 2 {
			t.Errorf("%s: progress iterations %v, want 1, 2, 3 (then stop)", meth, iters)
		}
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 2}, {Anchor: 3, Closer: 1, Farther: 0}}
	ctx := context.Background()
	if _, err := Fit(ctx, 3, ts, Options{}); err == nil {
		t.Error("triplet naming item 3 of 3: no error")
	}
	if _, err := Fit(ctx, 4, nil, Options{}); err == nil {
		t.Error("no triplets: no error")
	}
	if _, err := Fit(ctx, 4, ts, Options{Method: "mds"}); err == nil {
		t.Error("unknown method: no error")
	}
	if o := (Options{Params: STEParams{Lambda: -1}}).withDefaults(); o.Params.(STEParams).Lambda != 0 {
		t.Errorf("negative lambda gives %g, want 0", o.Params.(STEParams).Lambda)
	}
	if _, err := Fit(ctx, 4, ts, Options{Dim: 2, Init: mat.NewDense(4, 3, nil)}); err == nil {
		t.Error("warm start of the wrong shape: no error")
	}
}

// TestGramOpAdjoint: ⟨K·vec(G), u⟩ = ⟨G, Kᵀu⟩, and γ_t = d_ac − d_ab.
func TestGramOpAdjoint(t *testing.T) {
	t.Parallel()
	const n = 7
	x, ts := randomProblem(13, n, 3, 40)
	rng := triplet.NewRand(14)
	G := make([]float64, n*n)
	for i := range n {
		for j := range n {
			G[i*n+j] = mat.Dot(x.RowView(i), x.RowView(j))
		}
	}
	op := newGramOp(n, flatten(ts), 1)
	gam := make([]float64, len(ts))
	op.apply(gam, G)
	for k, tt := range ts {
		want := triplet.SqDist(x, tt.Anchor, tt.Farther) - triplet.SqDist(x, tt.Anchor, tt.Closer)
		if math.Abs(gam[k]-want) > 1e-12 {
			t.Fatalf("margin of %v: %g, want d_ac − d_ab = %g", tt, gam[k], want)
		}
	}
	u := make([]float64, len(ts))
	for k := range u {
		u[k] = rng.NormFloat64()
	}
	R := make([]float64, n*n)
	for k := range R {
		R[k] = rng.NormFloat64()
	}
	op.apply(gam, R)
	KT := make([]float64, n*n)
	op.applyT(KT, u)
	var lhs, rhs float64
	for k := range u {
		lhs += gam[k] * u[k]
	}
	for k := range R {
		rhs += R[k] * KT[k]
	}
	if math.Abs(lhs-rhs) > 1e-10*math.Max(1, math.Abs(lhs)) {
		t.Errorf("⟨Kg, u⟩ = %g, ⟨g, Kᵀu⟩ = %g", lhs, rhs)
	}
	// CG solves (KᵀK + I)g = b.
	b := make([]float64, n*n)
	for k := range b {
		b[k] = rng.NormFloat64()
	}
	g := make([]float64, n*n)
	cg := newCG(n * n)
	cg.solve(op, g, b)
	chk := make([]float64, n*n)
	cg.mul(op, chk, g)
	for k := range chk {
		if math.Abs(chk[k]-b[k]) > 1e-6 {
			t.Fatalf("CG residual %g at %d", chk[k]-b[k], k)
		}
	}
}

func TestProxHinge(t *testing.T) {
	t.Parallel()
	// argmin τ·max(e,0) + ½(e − s)², worked by hand per branch.
	for _, c := range []struct{ s, tau, want float64 }{{3, 1, 2}, {0.5, 1, 0}, {-2, 1, -2}, {1, 1, 0}} {
		if got := proxHinge(c.s, c.tau); got != c.want {
			t.Errorf("proxHinge(%g, %g) = %g, want %g", c.s, c.tau, got, c.want)
		}
	}
}

// TestLogSum: the product accumulator agrees with a plain sum of logs over
// factors from 1e-200 to 1e250.
func TestLogSum(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(15)
	acc := newLogSum()
	var want float64
	for range 100000 {
		v := math.Exp(rng.NormFloat64() * 3)
		if rng.IntN(1000) == 0 {
			v = math.Pow(10, float64(rng.IntN(450)-200))
		}
		acc.mul(v)
		want += math.Log(v)
	}
	if got := acc.value(); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("logSum %.12g, sum of logs %.12g", got, want)
	}
}

// TestFitIndependentOfWorkers: whole fits with several chunks give the same
// points with 1 and with 2 workers.
func TestFitIndependentOfWorkers(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(16, 60, 2, 5*minChunk)
	for _, meth := range []Method{TSTE, DMOE} {
		opt := Options{Method: meth, Dim: 2, Seed: 3, MaxIter: 20, Workers: 1}
		a, err := Fit(context.Background(), 60, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Workers = 2
		b, err := Fit(context.Background(), 60, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a.X, b.X) {
			t.Errorf("%s: 1 and 2 workers give different points", meth)
		}
	}
}

// TestDMOEPaperStop: with PaperStop the ADMM ends at the first iteration
// whose objective (per triplet) differs from the previous one by less than
// Ma et al.'s 0.001, and the default runs on past it towards convergence.
func TestDMOEPaperStop(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(21, 40, 3, 800)
	var objs []float64
	res, err := Fit(context.Background(), 40, ts, Options{Params: DMOEParams{PaperStop: true}, Dim: 40, Seed: 2,
		Progress: func(_ int, loss float64) { objs = append(objs, loss) }})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 1; i < len(objs); i++ {
		if math.Abs(objs[i]-objs[i-1]) < 1e-3*float64(len(ts)) {
			want = i + 1
			break
		}
	}
	if want == 0 || res.Iterations != want || len(objs) != want {
		t.Fatalf("paper stop after %d iterations (%d progress calls), want the first small change at %d; objectives %v", res.Iterations, len(objs), want, objs)
	}
	conv, err := Fit(context.Background(), 40, ts, Options{Method: DMOE, Dim: 40, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if conv.Iterations <= res.Iterations {
		t.Errorf("converged run took %d iterations, the paper's rule %d; want more", conv.Iterations, res.Iterations)
	}
	t.Logf("paper stop %d iterations, convergence %d", res.Iterations, conv.Iterations)
}
