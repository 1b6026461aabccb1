package embed

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// DMOE has no gradient to check: it solves the convex problem (23) of Ma et
// al. 2019 on the Gram matrix by ADMM. These tests judge its answer with
// the objective alone, written here from the paper:
//
//	f(G) = Σ_t max(γ̃0 − γ_t, 0) + ν·max(γ_t − γ̃0, 0) + λ·trace(G),  G ⪰ 0,
//
// with the margin γ_t = d_ac − d_ab of t = (a; b closer, c farther) (eq. 4
// and the K_t of eq. 34) and λ = DMOEParams.Lambda·λ_max, λ_max the largest
// eigenvalue of Σ_t K_t (for PSD G the nuclear norm is the trace).

// dmoeRef holds the problem of one test, built densely from eq. (34).
type dmoeRef struct {
	n          int
	ts         []triplet.Triplet
	g0, nu, la float64
}

func newDMOERef(n int, ts []triplet.Triplet, p DMOEParams) *dmoeRef {
	// Σ_t K_t with K_t's entries of eq. (34) for t = (i; j, k): −1 at (i,j)
	// and (j,i), +1 at (i,k) and (k,i), +1 at (j,j), −1 at (k,k); our
	// orientation γ_t = d_ik − d_ij is −⟨K_t, G⟩ of the paper's labelling,
	// so M = −Σ_t K_t(34).
	m := mat.NewSymDense(n, nil)
	for _, t := range ts {
		i, j, k := t.Anchor, t.Closer, t.Farther
		m.SetSym(i, j, m.At(i, j)+1)
		m.SetSym(i, k, m.At(i, k)-1)
		m.SetSym(j, j, m.At(j, j)-1)
		m.SetSym(k, k, m.At(k, k)+1)
	}
	var eig mat.EigenSym
	if !eig.Factorize(m, false) {
		panic("no eigenvalues")
	}
	vals := eig.Values(nil)
	return &dmoeRef{n: n, ts: ts, g0: p.Margin, nu: p.Nu, la: p.Lambda * vals[n-1]}
}

// margin returns γ_t = d_ac − d_ab = g_cc − g_bb − 2g_ac + 2g_ab.
func (r *dmoeRef) margin(G *mat.SymDense, t triplet.Triplet) float64 {
	a, b, c := t.Anchor, t.Closer, t.Farther
	dab := G.At(a, a) + G.At(b, b) - 2*G.At(a, b)
	dac := G.At(a, a) + G.At(c, c) - 2*G.At(a, c)
	return dac - dab
}

func (r *dmoeRef) f(G *mat.SymDense) float64 {
	var s float64
	for _, t := range r.ts {
		g := r.margin(G, t)
		s += math.Max(r.g0-g, 0) + r.nu*math.Max(g-r.g0, 0)
	}
	var tr float64
	for i := range r.n {
		tr += G.At(i, i)
	}
	return s + r.la*tr
}

// psd returns the projection of the symmetric S onto the PSD cone.
func psd(S *mat.SymDense) *mat.SymDense {
	n := S.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(S, true) {
		panic("no eigenvalues")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	out := mat.NewSymDense(n, nil)
	for c, l := range vals {
		if l <= 0 {
			continue
		}
		out.SymRankOne(out, l, v.ColView(c))
	}
	return out
}

// subgradient minimises f over the PSD cone by the projected subgradient
// method (steps of length 0.3/√k, the best iterate kept): slow but independent of the
// ADMM, of the CG solve and of gramOp.
func (r *dmoeRef) subgradient(iters int) float64 {
	n := r.n
	G := mat.NewSymDense(n, nil)
	best := r.f(G)
	sub := mat.NewSymDense(n, nil)
	for k := 1; k <= iters; k++ {
		sub.Zero()
		for i := range n {
			sub.SetSym(i, i, r.la)
		}
		for _, t := range r.ts {
			g := r.margin(G, t)
			var s float64 // ∂/∂γ of the loss
			switch {
			case g < r.g0:
				s = -1
			case g > r.g0:
				s = r.nu
			}
			if s == 0 {
				continue
			}
			// ∂γ/∂G: +1 at (c,c), −1 at (b,b), −1 at (a,c),(c,a), +1 at (a,b),(b,a)
			// (symmetric: the off-diagonal pair as one SetSym of 1).
			a, b, c := t.Anchor, t.Closer, t.Farther
			sub.SetSym(c, c, sub.At(c, c)+s)
			sub.SetSym(b, b, sub.At(b, b)-s)
			sub.SetSym(a, c, sub.At(a, c)-s)
			sub.SetSym(a, b, sub.At(a, b)+s)
		}
		step := 0.3 / math.Sqrt(float64(k))
		norm := mat.Norm(sub, 2)
		if norm == 0 {
			break
		}
		next := mat.NewSymDense(n, nil)
		next.AddSym(G, scaledSym(sub, -step/norm))
		G = psd(next)
		best = math.Min(best, r.f(G))
	}
	return best
}

func scaledSym(a *mat.SymDense, s float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(s, a)
	return out
}

// TestDMOEOptimal: on a small problem (8 items, 40 triplets) DMOE run to a
// tight tolerance returns the Gram matrix G = XXᵀ (Dim = n) whose reported
// loss is f(G), that is no worse than an independent projected-subgradient
// solution of the same problem, and from which no feasible perturbation in
// 200 random directions lowers f (the problem is convex, so a point no
// small feasible step improves is the minimum). The ADMM stops before its
// cap, by its convergence rule. Started at that solution, one ADMM iteration
// ends lower than one from the default start (≈ 0): the warm start is used.
func TestDMOEOptimal(t *testing.T) {
	t.Parallel()
	const n = 8
	_, ts := randomProblem(41, n, 2, 40)
	for _, params := range []DMOEParams{{}, {Nu: 0.3, Margin: 2, Lambda: 0.1}} {
		o := Options{Params: params, Dim: n, Seed: 3, Tol: 1e-10, MaxIter: 5000}
		opt := o.withDefaults()
		p := opt.Params.(DMOEParams)
		res, err := fitDMOE(context.Background(), n, ts, opt, p)
		if err != nil {
			t.Fatal(err)
		}
		G := mat.NewSymDense(n, nil)
		G.SymOuterK(1, res.X)
		ref := newDMOERef(n, ts, p)
		f := ref.f(G)
		if res.Iterations >= o.MaxIter {
			t.Errorf("ν=%g: ran to the cap of %d iterations; want a stop at convergence", p.Nu, o.MaxIter)
		}
		if math.Abs(f-res.Loss) > 1e-9*math.Max(1, f) {
			t.Errorf("ν=%g: reported loss %.12g, f(XXᵀ) %.12g", p.Nu, res.Loss, f)
		}
		sg := ref.subgradient(20000)
		t.Logf("ν=%g γ̃0=%g λ=%g: ADMM f = %.6f in %d iterations, projected subgradient %.6f", p.Nu, p.Margin, p.Lambda, f, res.Iterations, sg)
		if f > sg*(1+1e-3) {
			t.Errorf("ν=%g: ADMM objective %.9g above the subgradient method's %.9g", p.Nu, f, sg)
		}
		warm, cold := opt, opt
		warm.MaxIter, cold.MaxIter = 1, 1
		warm.Init = res.X
		w, err := fitDMOE(context.Background(), n, ts, warm, p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := fitDMOE(context.Background(), n, ts, cold, p)
		if err != nil {
			t.Fatal(err)
		}
		if w.Iterations != 1 || !(w.Loss < c.Loss) {
			t.Errorf("ν=%g: one iteration (%d) from the solution ends at %g, from the default start at %g; want lower from the solution", p.Nu, w.Iterations, w.Loss, c.Loss)
		}
		rng := triplet.NewRand(42)
		scale := mat.Norm(G, 2)
		for range 200 {
			R := mat.NewSymDense(n, nil)
			for i := range n {
				for j := i; j < n; j++ {
					R.SetSym(i, j, rng.NormFloat64())
				}
			}
			for _, eps := range []float64{1e-2, 1e-4} {
				P := mat.NewSymDense(n, nil)
				P.AddSym(G, scaledSym(R, eps*scale/mat.Norm(R, 2)))
				if fp := ref.f(psd(P)); fp < f-1e-7*math.Max(1, f) {
					t.Errorf("ν=%g: a step of %g lowers f from %.10g to %.10g", p.Nu, eps, f, fp)
				}
			}
		}
	}
}

// TestCGTolerance: the conjugate-gradient G-step solves (KᵀK + I)g = b to
// its stated relative residual cgTol = 1e-8 (cgSolver's loop ends when
// ‖r‖² ≤ cgTol²·‖b‖²), whatever the scale of b; the true residual is
// recomputed here, and a factor 2 allows for its drift from the recursive
// one. The right-hand sides are scaled by 1e-3 and 1e3 so that a tolerance
// taken absolute instead of relative fails one of them.
func TestCGTolerance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n, m int
	}{{7, 40}, {12, 300}} {
		_, ts := randomProblem(43, c.n, 3, c.m)
		op := newGramOp(c.n, flatten(ts), 1)
		rng := triplet.NewRand(44)
		nn := c.n * c.n
		for _, scale := range []float64{1e-3, 1e3} {
			b := make([]float64, nn)
			var bb float64
			for k := range b {
				b[k] = scale * rng.NormFloat64()
				bb += b[k] * b[k]
			}
			g := make([]float64, nn)
			cg := newCG(nn)
			cg.solve(op, g, b)
			chk := make([]float64, nn)
			cg.mul(op, chk, g)
			var rr float64
			for k := range chk {
				rr += (chk[k] - b[k]) * (chk[k] - b[k])
			}
			if rel := math.Sqrt(rr / bb); rel > 2*cgTol {
				t.Errorf("n=%d m=%d scale %g: relative residual %.3g, want ≤ %g", c.n, c.m, scale, rel, cgTol)
			}
		}
	}
}

// TestTopEigen: the points of a PSD matrix G = VΛVᵀ are the columns
// v_c·√λ_c in decreasing order of λ, each signed so that its largest entry
// in magnitude is positive (topEigen's comment). G here is built by hand
// from orthonormal vectors with the largest entries negative, so the sign
// rule must flip them.
func TestTopEigen(t *testing.T) {
	t.Parallel()
	// Orthonormal: v1 = (−3, 1, 1, 1)/√12, v2 = (0, 1, −2, 1)/√6 · −1.
	v1 := []float64{-3 / math.Sqrt(12), 1 / math.Sqrt(12), 1 / math.Sqrt(12), 1 / math.Sqrt(12)}
	v2 := []float64{0, -1 / math.Sqrt(6), 2 / math.Sqrt(6), -1 / math.Sqrt(6)}
	const l1, l2 = 4.0, 1.0
	G := make([]float64, 16)
	for i := range 4 {
		for j := range 4 {
			G[i*4+j] = l1*v1[i]*v1[j] + l2*v2[i]*v2[j]
		}
	}
	x, err := topEigen(G, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		// Column 0: −v1·2 (largest |entry| −3/√12 flipped to +), column 1:
		// v2·1 (largest entry 2/√6 already positive), column 2: 0.
		want := []float64{-2 * v1[i], v2[i], 0}
		for c := range 3 {
			tol := 1e-12
			if c == 2 {
				tol = 1e-7 // √ of an eigenvalue of 0 computed as ≈ 1e-16
			}
			if math.Abs(x.At(i, c)-want[c]) > tol {
				t.Errorf("point %d coordinate %d: %g, want %g", i, c, x.At(i, c), want[c])
			}
		}
	}
}
