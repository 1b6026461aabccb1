package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// The point losses have two code paths: sqDists and scatter unroll the
// common 2-D case and loop over the coordinates otherwise. The dashboard
// fits 2-D, so a gradient check in one dimension alone (it used to be 3-D)
// leaves the path that matters unchecked. Every check below runs in 1-D and
// 3-D (the loop) and 2-D (the unrolled path), for every point method and
// every branch of t-STE's exponent (α = 1: e = 1, α = 2: e = 1.5, else
// math.Pow).

// gradCases lists every point loss and branch; Dim is set per check.
var gradCases = []Options{
	{Params: STEParams{Lambda: 0.7}},
	{Params: STEParams{Lambda: -1}},
	{Params: TSTEParams{Alpha: 1}},
	{Params: TSTEParams{Alpha: 2, Lambda: 0.3}},
	{Params: TSTEParams{Alpha: 3.7}},
	{Params: GNMDSParams{Margin: 1, Lambda: 2}},
	{Params: GNMDSParams{Margin: 0.3, Lambda: -1}},
	{Params: CKLParams{Mu: 0.1, Lambda: 1}},
	{Params: CKLParams{Mu: 0.7, Lambda: -1}},
	{Params: SOEParams{Margin: 0.5}},
	{Params: SOEParams{Margin: 0.05}},
}

// chunkFor returns the loss and regulariser weight of a point method's
// options (after withDefaults).
func chunkFor(opt Options) (chunkFunc, float64) { return opt.Params.(pointParams).loss() }

// lambdaOf is the regulariser weight the paper's objective gives p: its
// Lambda, none for SOE.
func lambdaOf(p Params) float64 {
	switch p := p.(type) {
	case STEParams:
		return p.Lambda
	case TSTEParams:
		return p.Lambda
	case GNMDSParams:
		return p.Lambda
	case CKLParams:
		return p.Lambda
	}
	return 0
}

// caseName names a case for messages.
func caseName(o Options) string {
	return fmt.Sprintf("%s d=%d %+v", o.Method, o.Dim, o.Params)
}

// fdGradient returns the central finite-difference gradient of ev at x, with
// the step h·max(1, |x_i|) per coordinate.
func fdGradient(ev *evaluator, x []float64, h float64) []float64 {
	fd := make([]float64, len(x))
	tmp := make([]float64, len(x))
	for i := range x {
		s := h * math.Max(1, math.Abs(x[i]))
		xp := slices.Clone(x)
		xp[i] += s
		fp := ev.eval(xp, tmp)
		xp[i] = x[i] - s
		fm := ev.eval(xp, tmp)
		fd[i] = (fp - fm) / (2 * s)
	}
	return fd
}

// checkGradient compares the analytic gradient of ev at x with central
// finite differences of step h, coordinate by coordinate, with the relative
// tolerance rtol: |g_i − fd_i| ≤ rtol·max(|fd_i|, ‖fd‖∞/100). The floor
// ‖fd‖∞/100 only matters for coordinates whose derivative nearly cancels
// (one triplet's term is of order ‖fd‖∞/m, 1/25 of it here).
// The finite-difference error is the rounding error of the loss over h plus
// the truncation error ≈ h²·f”': for 25 triplets and h = 1e-6 about
// 1e-16·25/1e-6 + 1e-12 ≈ 1e-9, well below rtol = 1e-6 of derivatives of
// order 1e-3 to 1. It returns the largest relative error.
func checkGradient(t *testing.T, name string, ev *evaluator, x []float64, h, rtol float64) float64 {
	t.Helper()
	g := make([]float64, len(x))
	ev.eval(x, g)
	fd := fdGradient(ev, x, h)
	var norm float64
	for _, v := range fd {
		norm = math.Max(norm, math.Abs(v))
	}
	if norm == 0 {
		t.Fatalf("%s: the gradient is zero everywhere: nothing checked", name)
	}
	var worst float64
	for i := range x {
		scale := math.Max(math.Abs(fd[i]), norm/100)
		rel := math.Abs(g[i]-fd[i]) / scale
		worst = math.Max(worst, rel)
		if rel > rtol {
			t.Errorf("%s: ∂/∂x[%d] (point %d, coordinate %d) analytic %.10g, finite difference %.10g (relative error %.2g > %g)",
				name, i, i/ev.d, i%ev.d, g[i], fd[i], rel, rtol)
		}
	}
	return worst
}

// TestGradientsAllDims checks every point loss with its regulariser
// against central finite differences in 1, 2 and 3 dimensions, on 7 points
// at random positions and 25 random triplets (few, so that one triplet's
// share of a coordinate's derivative is large and a wrong sign in any one
// term shows), where the hinges are differentiable with probability 1. A
// flipped sign anywhere in scatter's 2-D branch changes some coordinate's
// derivative by a sizeable fraction of itself, far above the tolerance
// 1e-6.
func TestGradientsAllDims(t *testing.T) {
	t.Parallel()
	const n, m = 7, 25
	_, ts := randomProblem(31, n, 2, m)
	tr := flatten(ts)
	rng := triplet.NewRand(32)
	var worst float64
	for _, d := range []int{1, 2, 3} {
		for _, c := range gradCases {
			opt := c
			opt.Dim = d
			opt = opt.withDefaults()
			f, lambda := chunkFor(opt)
			ev := newEvaluator(n, d, tr, f, lambda, 1)
			x := make([]float64, n*d)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			worst = math.Max(worst, checkGradient(t, caseName(opt), ev, x, 1e-6, 1e-6))
		}
	}
	t.Logf("largest relative error %.2g", worst)
}

// TestGradientsSeveralChunks: the same check on a problem large enough for
// three chunks (2·minChunk + 100 triplets), with 1 and 2 workers, so the
// sum of the chunk partials and the division by m are checked too, in 2-D.
// The loss sums 16,484 terms, whose rounding (≈ 1e-16 per term relative to
// the mean loss, so ≈ 1e-14 in all) over h = 1e-6 makes finite differences
// good to ≈ 1e-8 only (measured 1e-8 on a derivative of 1.5e-3); h = 1e-5
// and rtol = 1e-5 leave that a factor 10 inside. A missing chunk or a wrong
// scale is an error of order 1.
func TestGradientsSeveralChunks(t *testing.T) {
	t.Parallel()
	const n, d, m = 5, 2, 2*minChunk + 100
	_, ts := randomProblem(33, n, d, m)
	tr := flatten(ts)
	rng := triplet.NewRand(34)
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	var worst float64
	for _, c := range []Options{{Method: STE}, {Method: TSTE}, {Method: GNMDS}, {Method: CKL}, {Params: SOEParams{Margin: 0.5}}} {
		c.Dim = d
		opt := c.withDefaults()
		f, lambda := chunkFor(opt)
		for _, w := range []int{1, 2} {
			ev := newEvaluator(n, d, tr, f, lambda, w)
			if len(ev.losses) != 3 {
				t.Fatalf("%d chunks, want 3", len(ev.losses))
			}
			worst = math.Max(worst, checkGradient(t, fmt.Sprintf("%s, %d workers", caseName(opt), w), ev, x, 1e-5, 1e-5))
		}
	}
	t.Logf("largest relative error %.2g", worst)
}

// TestTSTEGradientFar checks t-STE's branch for r = q(d_il)/q(d_ij) >
// 1e300, where the loss log(1 + r) is taken as e·log((α+d_ij)/(α+d_il)):
// one triplet with d_ij = 1e240 (‖x_i − x_j‖ = 1e120) and d_il = 1. There
// the derivatives of x_j's coordinates are of order 1e-120, so each
// coordinate is compared relative to its own finite difference.
func TestTSTEGradientFar(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 2, 3} {
		for _, alpha := range []float64{2, 3.7} {
			e := (alpha + 1) / 2
			// x_i = 0, x_j = (1e120, 0, …), x_k = (1, 0, …, −0.25) (1-D: 0.75).
			x := make([]float64, 3*d)
			x[d] = 1e120
			x[2*d] = 1
			x[3*d-1] -= 0.25
			dik := 1 + 0.25*0.25
			if d == 1 {
				dik = 0.75 * 0.75
			}
			tr := []int32{0, 1, 2}
			ev := newEvaluator(3, d, tr, tsteChunk(alpha), 0, 1)
			g := make([]float64, len(x))
			f := ev.eval(x, g)
			// By hand: log(1 + r) = e·log((α + 1e240)/(α + d_il)) up to 1e-300.
			want := e * math.Log((alpha+1e240)/(alpha+dik))
			if math.Abs(f-want) > 1e-12*want {
				t.Errorf("d=%d α=%g: far loss %.15g, want e·log ratio %.15g", d, alpha, f, want)
			}
			fd := fdGradient(ev, x, 1e-6)
			for i := range x {
				if fd[i] == 0 {
					if g[i] != 0 {
						t.Errorf("d=%d α=%g: ∂/∂x[%d] analytic %g, finite difference 0", d, alpha, i, g[i])
					}
					continue
				}
				if rel := math.Abs(g[i]-fd[i]) / math.Abs(fd[i]); rel > 1e-6 {
					t.Errorf("d=%d α=%g: ∂/∂x[%d] analytic %.10g, finite difference %.10g", d, alpha, i, g[i], fd[i])
				}
			}
			// x_j's derivative, by hand: e·2(x_j − x_i)/(α + d_ij) = 2e/1e120.
			if got, want := g[d], 2*e/1e120; math.Abs(got-want) > 1e-9*want {
				t.Errorf("d=%d α=%g: ∂/∂x_j %g, want 2e/‖x_i − x_j‖ = %g", d, alpha, got, want)
			}
		}
	}
}

// refLoss is each loss written from its paper's formula, in the
// probability form where there is one, with none of objective.go's
// rearrangements (softplus split, ratio form, logSum):
//
//	STE   −log p, p = e^{−d_ij}/(e^{−d_ij} + e^{−d_il})   (van der Maaten & Weinberger 2012, eq. 3)
//	t-STE −log p, p = q_ij/(q_ij + q_il), q = (1 + d/α)^{−(α+1)/2}   (eq. 4)
//	GNMDS max(0, margin + d_ij − d_il)                    (sec. 3, constraint with slack)
//	CKL   −log((d_il + μ)/(d_ij + d_il + 2μ))             (sec. 3, Tamuz et al.)
//	SOE   max(0, ‖x_i − x_j‖ + margin − ‖x_i − x_l‖)²     (Terada & von Luxburg 2014, eq. 4)
func refLoss(o Options, dij, dik float64) float64 {
	switch p := o.Params.(type) {
	case STEParams:
		return -math.Log(math.Exp(-dij) / (math.Exp(-dij) + math.Exp(-dik)))
	case TSTEParams:
		q := func(d float64) float64 { return math.Pow(1+d/p.Alpha, -(p.Alpha+1)/2) }
		return -math.Log(q(dij) / (q(dij) + q(dik)))
	case GNMDSParams:
		return math.Max(0, p.Margin+dij-dik)
	case CKLParams:
		return -math.Log((dik + p.Mu) / (dij + dik + 2*p.Mu))
	case SOEParams:
		h := math.Max(0, math.Sqrt(dij)+p.Margin-math.Sqrt(dik))
		return h * h
	}
	panic("no reference loss")
}

// TestLossValues checks the objective (1/m)(Σ_t ℓ_t + λ‖X‖²_F) (no
// regulariser for SOE) against refLoss in 1, 2 and 3 dimensions, and on
// three chunks with 2 workers: the gradient checks above only show that
// the gradient fits the loss, not that the loss is the paper's.
func TestLossValues(t *testing.T) {
	t.Parallel()
	check := func(name string, opt Options, n, d int, ts []triplet.Triplet, x []float64, workers int) {
		t.Helper()
		f, lambda := chunkFor(opt)
		ev := newEvaluator(n, d, flatten(ts), f, lambda, workers)
		got := ev.eval(x, make([]float64, len(x)))
		sq := func(i, j int) float64 {
			var s float64
			for c := range d {
				e := x[i*d+c] - x[j*d+c]
				s += e * e
			}
			return s
		}
		var sum, norm float64
		for _, tt := range ts {
			sum += refLoss(opt, sq(tt.Anchor, tt.Closer), sq(tt.Anchor, tt.Farther))
		}
		for _, v := range x {
			norm += v * v
		}
		want := (sum + lambdaOf(opt.Params)*norm) / float64(len(ts))
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: objective %.15g, from the paper's formula %.15g", name, got, want)
		}
	}
	const n, m = 7, 25
	_, ts := randomProblem(35, n, 2, m)
	rng := triplet.NewRand(36)
	for _, d := range []int{1, 2, 3} {
		for _, c := range gradCases {
			opt := c
			opt.Dim = d
			opt = opt.withDefaults()
			x := make([]float64, n*d)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			check(caseName(opt), opt, n, d, ts, x, 1)
		}
	}
	const bn = 40
	_, big := randomProblem(37, bn, 2, 2*minChunk+100)
	x := make([]float64, bn*2)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for _, c := range gradCases {
		c.Dim = 2
		opt := c.withDefaults()
		check(caseName(opt)+", 3 chunks", opt, bn, 2, big, x, 2)
	}
}

// countingCtx is a context whose Err turns to context.Canceled after limit
// calls. minimizeLBFGS asks for ctx.Err at every request for the loss, so
// it is a watchdog that counts requests without a clock: without the
// evaluation budget a spinning line search ends here with an error the
// test reports, instead of hanging.
type countingCtx struct {
	context.Context
	calls, limit int
}

func (c *countingCtx) Err() error {
	c.calls++
	if c.calls > c.limit {
		return context.Canceled
	}
	return nil
}

// TestWrongGradientStops: with a gradient that disagrees with the loss the
// optimiser must stop within its budget of evalsPerIter·MaxIter requests
// for the loss, not spin. The wrong gradients are the correct one with one
// coordinate's sign flipped (what a flipped sign in scatter does to some
// coordinates; for STE on this problem it used to make gonum's line search
// ask for the same point forever), the whole gradient negated, and every
// second coordinate negated. It also checks that sound gradients finish
// far inside the budget, so the budget never decides a sound fit.
func TestWrongGradientStops(t *testing.T) {
	t.Parallel()
	const n, d, maxIter = 30, 2, 1000
	_, ts := randomProblem(5, n, d, 3000)
	tr := flatten(ts)
	budget := evalsPerIter * maxIter
	wrongs := []struct {
		name string
		f    func(g []float64)
	}{
		{"sound", func([]float64) {}},
		{"one coordinate flipped", func(g []float64) { g[3] = -g[3] }},
		{"negated", func(g []float64) {
			for i := range g {
				g[i] = -g[i]
			}
		}},
		{"every second coordinate flipped", func(g []float64) {
			for i := 1; i < len(g); i += 2 {
				g[i] = -g[i]
			}
		}},
	}
	for _, meth := range []Method{TSTE, STE, GNMDS, CKL, SOE} {
		opt := Options{Method: meth, Dim: d, MaxIter: maxIter}.withDefaults()
		f, lambda := chunkFor(opt)
		for _, w := range wrongs {
			// The wrong gradient is applied to the whole chunk's gradient, so
			// the evaluator must have one chunk.
			bad := func(x []float64, dd int, tr []int32, g []float64) float64 {
				tmp := make([]float64, len(g))
				l := f(x, dd, tr, tmp)
				w.f(tmp)
				for i := range g {
					g[i] += tmp[i]
				}
				return l
			}
			ev := newEvaluator(n, d, tr, bad, lambda, 1)
			if len(ev.losses) != 1 {
				t.Fatal("want one chunk")
			}
			ctx := &countingCtx{Context: context.Background(), limit: 20 * budget}
			x0 := randomStart(n, d, opt.InitScale, 3)
			x, loss, iters, err := minimizeLBFGS(ctx, ev, x0, opt, 0)
			name := fmt.Sprintf("%s, %s gradient", meth, w.name)
			if err != nil {
				t.Errorf("%s: error %v after %d requests for the loss (%d evaluations, %d iterations); want a stop within %d requests",
					name, err, ev.requests, ev.evals, iters, budget)
				continue
			}
			if ev.requests > budget || ev.evals > ev.requests {
				t.Errorf("%s: %d requests, %d evaluations; want evaluations ≤ requests ≤ %d", name, ev.requests, ev.evals, budget)
			}
			// The result is the best point seen: its loss is the one reported
			// and no worse than the start's.
			g := make([]float64, len(x))
			if got := ev.eval(x, g); got != loss {
				t.Errorf("%s: returned loss %g, the loss at the returned point %g", name, loss, got)
			}
			if start := ev.eval(x0, g); loss > start {
				t.Errorf("%s: returned loss %g above the start's %g", name, loss, start)
			}
			if w.name == "sound" && ev.requests > budget/4 {
				t.Errorf("%s: %d requests for the loss in %d iterations; a sound run needs far fewer than the budget %d", name, ev.requests, iters, budget)
			}
		}
	}
}

// TestFitEvaluationsBounded: Fit reports its evaluations, and they stay
// within the budget of every start (SOE runs Inits starts), for a small
// iteration cap that the fits reach.
func TestFitEvaluationsBounded(t *testing.T) {
	t.Parallel()
	_, ts := randomProblem(38, 30, 2, 2000)
	for _, meth := range []Method{TSTE, STE, GNMDS, CKL, SOE} {
		opt := Options{Method: meth, Dim: 2, Seed: 4, MaxIter: 5}
		res, err := Fit(context.Background(), 30, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		starts := opt.withDefaults().Params.(pointParams).starts(opt.Dim)
		if res.Evaluations < 1 || res.Evaluations > starts*evalsPerIter*opt.MaxIter {
			t.Errorf("%s: %d evaluations, want 1..%d", meth, res.Evaluations, starts*evalsPerIter*opt.MaxIter)
		}
		if res.Iterations > starts*opt.MaxIter {
			t.Errorf("%s: %d iterations, cap %d per start", meth, res.Iterations, opt.MaxIter)
		}
	}
}

// TestChunkBounds: the fixed chunking of the evaluator (and of DMOE's
// gramOp, twice the chunk size) covers the triplets once, in order, with
// chunks of minChunk triplets (2·minChunk for gramOp) as long as that
// makes at most maxChunks of them, and otherwise maxChunks chunks of
// ⌈m/maxChunks⌉ (the comments of minChunk and newEvaluator; the expected
// counts are worked by hand for each m).
func TestChunkBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m, chunks, size, opChunks, opSize int
	}{
		{1, 1, 1, 1, 1},
		{minChunk, 1, minChunk, 1, minChunk},
		{minChunk + 1, 2, minChunk, 1, minChunk + 1},
		{5*minChunk + 7, 6, minChunk, 3, 2 * minChunk},
		{64 * minChunk, 64, minChunk, 32, 2 * minChunk},
		// 100·8192 = 819,200 triplets: ⌈819200/64⌉ = 12,800 per chunk, 64
		// chunks; gramOp: max(16384, 12800) = 16,384, 50 chunks.
		{100 * minChunk, 64, 12800, 50, 2 * minChunk},
		// 64·12800 + 1: ⌈/64⌉ = 12,801 per chunk, 64 chunks (the last 12,738);
		// gramOp: 819,201 = 50·16,384 + 1, 51 chunks.
		{64*12800 + 1, 64, 12801, 51, 2 * minChunk},
	} {
		tr := make([]int32, 3*c.m)
		for k := range c.m {
			tr[3*k], tr[3*k+1], tr[3*k+2] = 0, 1, 2
		}
		check := func(name string, bounds []int, chunks, size int) {
			t.Helper()
			if len(bounds) != chunks+1 || bounds[0] != 0 || bounds[chunks] != c.m {
				t.Errorf("m=%d %s: bounds %v…, want %d chunks over 0..%d", c.m, name, bounds[:min(3, len(bounds))], chunks, c.m)
				return
			}
			for k := 1; k <= chunks; k++ {
				want := size
				if k == chunks {
					want = c.m - (chunks-1)*size
				}
				if got := bounds[k] - bounds[k-1]; got != want {
					t.Errorf("m=%d %s: chunk %d holds %d triplets, want %d", c.m, name, k-1, got, want)
					return
				}
			}
		}
		ev := newEvaluator(3, 1, tr, steChunk, 0, 1)
		check("evaluator", ev.bounds, c.chunks, c.size)
		if len(ev.losses) != c.chunks || len(ev.bufs) != c.chunks {
			t.Errorf("m=%d: %d losses, %d buffers, want %d", c.m, len(ev.losses), len(ev.bufs), c.chunks)
		}
		op := newGramOp(3, tr, 1)
		check("gramOp", op.bounds, c.opChunks, c.opSize)
	}
}

// TestLogSumExtremes: factors beyond [1e-150, 1e150] are logged directly,
// never multiplied into the kept mantissa, so no order of factors overflows
// or underflows it (mul's comment): here each extreme factor comes right
// after a factor that pushed the mantissa towards the same end. The exact
// sum, by hand: the exponents add to 99 + 250 + 0.5 − 99 − 300 − 1 = −50.5
// (decimal), so the value is −50.5·ln 10.
func TestLogSumExtremes(t *testing.T) {
	t.Parallel()
	acc := newLogSum()
	for _, v := range []float64{1e99, 1e250, math.Sqrt(10), 1e-99, 1e-300, 0.1} {
		acc.mul(v)
	}
	if got, want := acc.value(), -50.5*math.Ln10; math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("logSum %.15g, want −50.5·ln 10 = %.15g", got, want)
	}
}
