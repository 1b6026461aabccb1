package embed

import (
	"context"
	"errors"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// DMOE (Ma et al. 2019) learns the Gram matrix G of the points with the
// distributional-margin loss of eq. (16),
//
//	ℓ(γ_t) = max(γ̃0 − γ_t, 0) + ν·max(γ_t − γ̃0, 0),
//
// where the margin of a triplet t = (a; b closer, c farther) is
// γ_t = d_ac − d_ab = ⟨K_t, G⟩ (eq. 4 and 34, oriented so that a satisfied
// triplet has a positive margin; all labels y_t are then +1). With the
// nuclear norm as the convex surrogate of the rank, problem (23) is
//
//	min Σ_t (e1_t)_+ + ν Σ_t (e2_t)_+ + λ‖G1‖_*
//	s.t. G = G1, G = G2, G2 ⪰ 0, e1 = e_Q, e2 = −e_Q, e_Q = γ̃0 − K·vec(G),
//
// solved by the ADMM of Algorithm 1 with the augmented Lagrangian (24):
// the e-steps (25-27) are the proximal maps of the hinge, the G-step (28-29)
// solves 2(KᵀK + I)·vec(G) = Kᵀ(2γ̃0 − e1 + e2 − z1/μ + z2/μ) + vec(G1 − Z3/μ
// + G2 − Z4/μ) (our derivation with the margin sign above; it agrees with
// eq. 29 up to that sign and the γ̃0 term) by conjugate gradients, applying
// K and Kᵀ through the triplets, never as a |T| × n² matrix; the G1-step
// (30-31) is singular-value thresholding and the G2-step (32) the projection
// onto the PSD cone (Higham 1988; for the symmetric iterates here both are
// eigenvalue maps). The multipliers follow (33) with μ ← min(ρμ, 1e5).
// ν weights the e2 term (the paper's (23) leaves it implicit; it is ν in
// (15-16)). The embedding is the top-Dim eigenpairs of the final PSD G2
// (Dim = n returns all of G2, the matrix the paper scores). It stops at
// convergence, or by the paper's rule with DMOEParams.PaperStop.
func fitDMOE(ctx context.Context, n int, ts []triplet.Triplet, opt Options, p DMOEParams) (*Result, error) {
	tr := flatten(ts)
	m := len(ts)
	nn := n * n
	op := newGramOp(n, tr, opt.Workers)

	x0 := startPoints(n, ts, opt, triplet.NewRand(opt.Seed).Uint64())
	G := make([]float64, nn)
	for i := range n {
		for j := range n {
			var s float64
			for c := range opt.Dim {
				s += x0[i*opt.Dim+c] * x0[j*opt.Dim+c]
			}
			G[i*n+j] = s
		}
	}
	G1 := append([]float64(nil), G...)
	G2 := append([]float64(nil), G...)
	Z3 := make([]float64, nn)
	Z4 := make([]float64, nn)
	z1 := make([]float64, m)
	z2 := make([]float64, m)
	e1 := make([]float64, m)
	e2 := make([]float64, m)
	eQ := make([]float64, m)
	gam := make([]float64, m)
	u := make([]float64, m)
	rhs := make([]float64, nn)
	S1 := make([]float64, nn)
	S2 := make([]float64, nn)
	cg := newCG(nn)

	// λ is given relative to λ_max, the largest eigenvalue of Σ_t K_t:
	// at λ ≥ λ_max·(the hinge's slope 1) the zero matrix is optimal, since
	// the subgradient of the loss at G = 0 is −Σ_t K_t.
	for t := range m {
		u[t] = 1
	}
	op.applyT(rhs, u)
	var ew eigenWork
	ew.spectral(S1, rhs, n, func(v float64) float64 { return math.Max(v, 0) }) // fills ew.vals
	lmax := 0.0
	for _, v := range ew.vals {
		lmax = math.Max(lmax, v)
	}
	if ew.failed {
		return nil, errors.New("eigendecomposition failed")
	}
	g0, nu, lambda := p.Margin, p.Nu, p.Lambda*lmax
	mu := p.Penalty
	const muMax = 1e5

	op.apply(gam, G)
	for t := range m {
		eQ[t] = g0 - gam[t]
	}
	objective := func(Gp []float64, trace float64) float64 {
		op.apply(gam, Gp)
		var s float64
		for _, g := range gam {
			s += math.Max(g0-g, 0) + nu*math.Max(g-g0, 0)
		}
		return s + lambda*trace
	}
	prev := math.Inf(1)
	var obj float64
	iters := 0
	var eg [2]eigenWork
	for it := 1; it <= opt.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		iters = it
		// e-steps (25)-(27): proximal maps of τ·(·)_+.
		inv := 1 / mu
		for t := range m {
			e1[t] = proxHinge(eQ[t]-z1[t]*inv, inv)
			e2[t] = proxHinge(-eQ[t]-z2[t]*inv, nu*inv)
		}
		// G-step (28)-(29).
		for t := range m {
			u[t] = 0.5 * (2*g0 - e1[t] + e2[t] + (z2[t]-z1[t])*inv)
		}
		op.applyT(rhs, u)
		for k := range rhs {
			rhs[k] += 0.5 * (G1[k] - Z3[k]*inv + G2[k] - Z4[k]*inv)
		}
		cg.solve(op, G, rhs)
		// G1-step (31) and G2-step (32), side by side.
		for k := range G {
			S1[k] = G[k] + Z3[k]*inv
			S2[k] = G[k] + Z4[k]*inv
		}
		var wg sync.WaitGroup
		var trace2 float64
		wg.Go(func() { eg[0].spectral(G1, S1, n, func(v float64) float64 { return shrink(v, lambda*inv) }) })
		wg.Go(func() { trace2 = eg[1].spectral(G2, S2, n, func(v float64) float64 { return math.Max(v, 0) }) })
		wg.Wait()
		if eg[0].failed || eg[1].failed {
			return nil, errors.New("eigendecomposition failed")
		}
		// e_Q (22) and the multipliers (33).
		op.apply(gam, G)
		for t := range m {
			eQ[t] = g0 - gam[t]
			z1[t] += mu * (e1[t] - eQ[t])
			z2[t] += mu * (e2[t] + eQ[t])
		}
		var r1, r2, gg float64
		for k := range G {
			d1, d2 := G[k]-G1[k], G[k]-G2[k]
			Z3[k] += mu * d1
			Z4[k] += mu * d2
			r1 += d1 * d1
			r2 += d2 * d2
			gg += G[k] * G[k]
		}
		resid := math.Sqrt(math.Max(r1, r2) / math.Max(gg, 1))
		mu = math.Min(mu*p.Rho, muMax)

		obj = objective(G2, trace2)
		if opt.Progress != nil {
			opt.Progress(it, obj)
		}
		if p.PaperStop && math.Abs(prev-obj) < paperStopTol*float64(m) {
			break
		}
		if !p.PaperStop && it > 10 && resid <= math.Sqrt(opt.Tol)/10 && math.Abs(prev-obj) <= opt.Tol*math.Max(1, math.Abs(obj)) {
			break
		}
		prev = obj
	}
	x, err := topEigen(G2, n, opt.Dim)
	if err != nil {
		return nil, err
	}
	return &Result{X: x, Loss: obj, Iterations: iters}, nil
}

// paperStopTol is Ma et al.'s threshold on the change of the objective
// between two ADMM iterations ("0.001 is the default setting"), applied per
// triplet as the objective of (15) is normalised.
const paperStopTol = 1e-3

// proxHinge returns argmin_e τ·max(e, 0) + ½(e − s)².
func proxHinge(s, tau float64) float64 {
	switch {
	case s > tau:
		return s - tau
	case s > 0:
		return 0
	default:
		return s
	}
}

// shrink is the soft threshold sign(v)·max(|v| − τ, 0).
func shrink(v, tau float64) float64 {
	switch {
	case v > tau:
		return v - tau
	case v < -tau:
		return v + tau
	default:
		return 0
	}
}

// eigenWork holds the buffers of one symmetric eigenvalue map.
type eigenWork struct {
	eig    mat.EigenSym
	vecs   mat.Dense
	vals   []float64
	vt     []float64 // eigenvectors as rows
	failed bool
}

// transpose returns the n × n matrix v transposed into dst (row-major).
func transpose(dst []float64, v *mat.Dense, n int) []float64 {
	if len(dst) != n*n {
		dst = make([]float64, n*n)
	}
	raw := v.RawMatrix()
	for i := range n {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for c, x := range row {
			dst[c*n+i] = x
		}
	}
	return dst
}

// spectral stores in dst the matrix V·diag(f(σ))·Vᵀ where S's symmetric part
// is V·diag(σ)·Vᵀ, and returns Σ f(σ).
func (w *eigenWork) spectral(dst, S []float64, n int, f func(float64) float64) float64 {
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(S[i*n+j]+S[j*n+i]))
		}
	}
	if !w.eig.Factorize(sym, true) {
		w.failed = true
		return 0
	}
	w.vals = w.eig.Values(w.vals)
	w.eig.VectorsTo(&w.vecs)
	w.vt = transpose(w.vt, &w.vecs, n)
	clear(dst)
	var sum float64
	for c, v := range w.vals {
		fv := f(v)
		if fv == 0 {
			continue
		}
		sum += fv
		vc := w.vt[c*n : (c+1)*n]
		for i, vic := range vc {
			vi := fv * vic
			if vi == 0 {
				continue
			}
			row := dst[i*n : (i+1)*n]
			for j, vj := range vc {
				row[j] += vi * vj
			}
		}
	}
	return sum
}

// topEigen returns the points n × d from the top d eigenpairs of the PSD
// matrix G: column c is v_c·√max(σ_c, 0), signed so that its largest entry
// in magnitude is positive.
func topEigen(G []float64, n, d int) (*mat.Dense, error) {
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(G[i*n+j]+G[j*n+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	x := mat.NewDense(n, d, nil)
	for c := range min(d, n) {
		k := n - 1 - c // values ascend
		s := math.Sqrt(math.Max(vals[k], 0))
		big, sign := 0.0, 1.0
		for i := range n {
			if v := vecs.At(i, k); math.Abs(v) > big {
				big = math.Abs(v)
				sign = math.Copysign(1, v)
			}
		}
		for i := range n {
			x.Set(i, c, sign*s*vecs.At(i, k))
		}
	}
	return x, nil
}

// gramOp applies the triplet operator K (γ = K·vec(G), γ_t = ⟨K_t, G⟩ =
// g_cc − g_bb − 2g_ac + 2g_ab for t = (a, b, c)) and its adjoint, over fixed
// chunks of the triplets.
type gramOp struct {
	n       int
	tr      []int32
	bounds  []int
	bufs    [][]float64
	workers int
}

func newGramOp(n int, tr []int32, workers int) *gramOp {
	m := len(tr) / 3
	size := max(2*minChunk, (m+maxChunks-1)/maxChunks)
	chunks := max(1, (m+size-1)/size)
	o := &gramOp{n: n, tr: tr, workers: workers, bounds: make([]int, chunks+1), bufs: make([][]float64, chunks)}
	for c := range chunks {
		o.bounds[c+1] = min(m, (c+1)*size)
	}
	for c := 1; c < chunks; c++ {
		o.bufs[c] = make([]float64, n*n)
	}
	return o
}

// parallel runs f on every chunk, on up to o.workers goroutines.
func (o *gramOp) parallel(f func(c int)) {
	chunks := len(o.bufs)
	if chunks == 1 || o.workers == 1 {
		for c := range chunks {
			f(c)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range min(o.workers, chunks) {
		wg.Go(func() {
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= chunks {
					return
				}
				f(c)
			}
		})
	}
	wg.Wait()
}

// apply stores K·vec(G) in gam.
func (o *gramOp) apply(gam, G []float64) {
	n := o.n
	o.parallel(func(c int) {
		for t := o.bounds[c]; t < o.bounds[c+1]; t++ {
			a, b, cc := int(o.tr[3*t]), int(o.tr[3*t+1]), int(o.tr[3*t+2])
			gam[t] = G[cc*n+cc] - G[b*n+b] - G[a*n+cc] - G[cc*n+a] + G[a*n+b] + G[b*n+a]
		}
	})
}

// applyT stores Kᵀ·u (as an n × n matrix) in dst.
func (o *gramOp) applyT(dst, u []float64) {
	n := o.n
	o.parallel(func(c int) {
		buf := dst
		if c > 0 {
			buf = o.bufs[c]
		}
		clear(buf)
		for t := o.bounds[c]; t < o.bounds[c+1]; t++ {
			a, b, cc := int(o.tr[3*t]), int(o.tr[3*t+1]), int(o.tr[3*t+2])
			v := u[t]
			buf[cc*n+cc] += v
			buf[b*n+b] -= v
			buf[a*n+cc] -= v
			buf[cc*n+a] -= v
			buf[a*n+b] += v
			buf[b*n+a] += v
		}
	})
	for c := 1; c < len(o.bufs); c++ {
		for k, v := range o.bufs[c] {
			dst[k] += v
		}
	}
}

// cgSolver solves (KᵀK + I)·g = r by conjugate gradients.
type cgSolver struct {
	r, p, ap, gam []float64
}

func newCG(nn int) *cgSolver {
	return &cgSolver{r: make([]float64, nn), p: make([]float64, nn), ap: make([]float64, nn)}
}

const (
	cgTol     = 1e-8
	cgMaxIter = 200
)

func (s *cgSolver) mul(op *gramOp, dst, v []float64) {
	m := len(op.tr) / 3
	if len(s.gam) != m {
		s.gam = make([]float64, m)
	}
	op.apply(s.gam, v)
	op.applyT(dst, s.gam)
	for k := range dst {
		dst[k] += v[k]
	}
}

// solve overwrites g (the warm start) with the solution.
func (s *cgSolver) solve(op *gramOp, g, b []float64) {
	s.mul(op, s.ap, g)
	var rr, bb float64
	for k := range g {
		s.r[k] = b[k] - s.ap[k]
		s.p[k] = s.r[k]
		rr += s.r[k] * s.r[k]
		bb += b[k] * b[k]
	}
	limit := cgTol * cgTol * math.Max(bb, 1e-300)
	for it := 0; it < cgMaxIter && rr > limit; it++ {
		s.mul(op, s.ap, s.p)
		var pap float64
		for k, v := range s.p {
			pap += v * s.ap[k]
		}
		if !(pap > 0) {
			return
		}
		alpha := rr / pap
		var rr2 float64
		for k := range g {
			g[k] += alpha * s.p[k]
			s.r[k] -= alpha * s.ap[k]
			rr2 += s.r[k] * s.r[k]
		}
		beta := rr2 / rr
		rr = rr2
		for k := range s.p {
			s.p[k] = s.r[k] + beta*s.p[k]
		}
	}
}
