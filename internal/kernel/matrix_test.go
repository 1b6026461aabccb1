package kernel

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

func minEig(t *testing.T, k mat.Symmetric) float64 {
	t.Helper()
	var e mat.EigenSym
	if !e.Factorize(k, false) {
		t.Fatal("eigen decomposition failed")
	}
	return e.Values(nil)[0]
}

func TestMatrixMatchesAtAndFix(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(5)
	for _, c := range []struct {
		n, m int
		lm   bool
	}{{12, 300, false}, {30, 2000, false}, {60, 3000, true}, {8, 40, true}} {
		for _, kind := range []Kind{K1, K2} {
			var ts []triplet.Triplet
			var lm []int
			if c.lm {
				lm = rng.Perm(c.n)[:4]
				ts = landmarkTriplets(rng, kind, c.n, lm, c.m)
			} else {
				ts = randomTriplets(rng, c.n, c.m)
			}
			f, err := NewFeatures(kind, c.n, ts, lm)
			if err != nil {
				t.Fatal(err)
			}
			k := Matrix(f, false)
			for a := 0; a < c.n; a++ {
				for b := 0; b < c.n; b++ {
					if math.Abs(k.At(a, b)-f.At(a, b)) > 1e-12 {
						t.Fatalf("K[%d,%d] = %v, At = %v", a, b, k.At(a, b), f.At(a, b))
					}
				}
			}
			raw := k.RawSymmetric().Data
			for a := 0; a < c.n; a++ {
				for b := 0; b < c.n; b++ {
					if raw[a*c.n+b] != raw[b*c.n+a] {
						t.Fatalf("not symmetric at %d,%d", a, b)
					}
				}
			}
			lmin := minEig(t, k)
			kf := Matrix(f, true)
			got := minEig(t, kf)
			// After the fix the smallest eigenvalue is 0 (PSD, section 2.1).
			if math.Abs(got) > 1e-9 {
				t.Errorf("n=%d %v landmarks=%v: λ_min after fix = %v (before %v)", c.n, kind, c.lm, got, lmin)
			}
			if math.Abs(MinEigenvalue(f, nil)-max(lmin, 0)) > 1e-9 {
				t.Errorf("MinEigenvalue = %v, dense %v", MinEigenvalue(f, nil), lmin)
			}
			for a := 0; a < c.n; a++ {
				for b := 0; b < c.n; b++ {
					want := k.At(a, b)
					if a == b {
						want -= max(lmin, 0)
					}
					if math.Abs(kf.At(a, b)-want) > 1e-9 {
						t.Fatalf("fixed K[%d,%d] = %v, want %v", a, b, kf.At(a, b), want)
					}
				}
			}
		}
	}
}

func TestMinEigenvalueIterative(t *testing.T) { //nolint:paralleltest // sets process-wide state: var denseEigenMax
	// The Lanczos path (used above 2000 items) against the dense solver, on
	// general sparse sets where λ_min > 0: once with the Krylov space
	// reaching n (exact), once with n above the step cap.
	for _, c := range []struct{ n, m int }{{150, 6000}, {700, 140000}} {
		rng := triplet.NewRand(6)
		ts := randomTriplets(rng, c.n, c.m)
		f, err := NewFeatures(K1, c.n, ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := minEig(t, Matrix(f, false))
		if want <= 0.01 {
			t.Fatalf("test set has λ_min = %v, want a clearly positive one", want)
		}
		old := denseEigenMax
		denseEigenMax = 10
		got := MinEigenvalue(f, nil)
		denseEigenMax = old
		t.Logf("n=%d: Lanczos λ_min = %.12f, dense %.12f", c.n, got, want)
		// Never above λ_min (the fixed matrix stays PSD), and close to it.
		// The upper margin 1e-12 allows for the dense solver's rounding
		// (about 1e-15·‖K‖) but not for θ + r: at n = 700 the residual
		// bound r is about 4e-12 (measured), so a shift of θ + r instead of
		// θ − r lands above λ_min.
		if got > want+1e-12 || got < want-1e-3*want {
			t.Errorf("n=%d: iterative λ_min = %v, dense %v", c.n, got, want)
		}
	}
}

// sameUpToSign compares two score matrices column by column.
func sameUpToSign(t *testing.T, name string, x, y *mat.Dense, tol float64) { //nolint:unparam // the tolerance is named at the call
	t.Helper()
	r, c := x.Dims()
	for j := 0; j < c; j++ {
		var plus, minus float64
		for i := 0; i < r; i++ {
			plus = max(plus, math.Abs(x.At(i, j)-y.At(i, j)))
			minus = max(minus, math.Abs(x.At(i, j)+y.At(i, j)))
		}
		if min(plus, minus) > tol {
			t.Errorf("%s: column %d differs by %v", name, j, min(plus, minus))
		}
	}
}

func TestPCAFeatureRouteMatchesMatrix(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(7)
	x, _ := triplet.GaussianMixture(rng, 200, 3, 3, 6)
	o := triplet.NewOracle(x, 0.1, 8)
	for _, kind := range []Kind{K1, K2} {
		lm := rng.Perm(200)[:8]
		var ts []triplet.Triplet
		for _, q := range landmarkTriplets(rng, kind, 200, lm, 6000) {
			ts = append(ts, o.Answer(q.Anchor, q.Closer, q.Farther))
		}
		f, err := NewFeatures(kind, 200, ts, lm)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.PCA(3)
		if err != nil {
			t.Fatal(err)
		}
		// Reference: full eigendecomposition of the centered n×n matrix.
		k := Matrix(f, false)
		h := mat.NewDense(200, 200, nil)
		for i := 0; i < 200; i++ {
			for j := 0; j < 200; j++ {
				v := -1.0 / 200
				if i == j {
					v++
				}
				h.Set(i, j, v)
			}
		}
		var hk, hkh mat.Dense
		hk.Mul(h, k)
		hkh.Mul(&hk, h)
		kc := mat.NewSymDense(200, nil)
		for i := 0; i < 200; i++ {
			for j := i; j < 200; j++ {
				kc.SetSym(i, j, (hkh.At(i, j)+hkh.At(j, i))/2)
			}
		}
		var e mat.EigenSym
		e.Factorize(kc, true)
		vals := e.Values(nil)
		var v mat.Dense
		e.VectorsTo(&v)
		want := mat.NewDense(200, 3, nil)
		for c := 0; c < 3; c++ {
			for i := 0; i < 200; i++ {
				want.Set(i, c, v.At(i, 199-c)*math.Sqrt(vals[199-c]))
			}
		}
		sameUpToSign(t, kind.String()+" feature route", got, want, 1e-6)
		viaK, err := KernelPCA(k, 3)
		if err != nil {
			t.Fatal(err)
		}
		sameUpToSign(t, kind.String()+" KernelPCA", viaK, want, 1e-6)
		// n > Dim: the fix does not change the scores (λ_min = 0).
		fixed, err := f.PCAFixed(3)
		if err != nil {
			t.Fatal(err)
		}
		sameUpToSign(t, kind.String()+" fixed", fixed, want, 1e-6)
	}
}

func TestPCAFixedGeneral(t *testing.T) {
	t.Parallel()
	// General path with λ_min > 0: eigenvalues of the centered fixed kernel
	// are μ_k − λ_min, so the squared column norms of the scores are too.
	rng := triplet.NewRand(9)
	ts := randomTriplets(rng, 40, 4000)
	f, err := NewFeatures(K1, 40, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.PCA(2)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := f.PCAFixed(2)
	if err != nil {
		t.Fatal(err)
	}
	lmin := MinEigenvalue(f, nil)
	if lmin <= 0 {
		t.Fatalf("λ_min = %v, want > 0", lmin)
	}
	ref, err := KernelPCA(Matrix(f, true), 2)
	if err != nil {
		t.Fatal(err)
	}
	sameUpToSign(t, "fixed vs KernelPCA(fixed matrix)", fixed, ref, 1e-6)
	for c := 0; c < 2; c++ {
		var a, b float64
		for i := 0; i < 40; i++ {
			a += plain.At(i, c) * plain.At(i, c)
			b += fixed.At(i, c) * fixed.At(i, c)
		}
		if math.Abs(a-lmin-b) > 1e-8 {
			t.Errorf("component %d: μ = %v, fixed %v, λ_min %v", c, a, b, lmin)
		}
	}
}

// TestMinEigenvalueSquareFullRank: k1 on 3 items with one answer per anchor,
// (0,1,2), (1,0,2), (2,0,1), has Dim = C(3,2) = 3 = n columns, all in use:
// anchor 0 uses the pair {1,2}, anchor 1 {0,2}, anchor 2 {0,1}, each with
// value +1 (eq. 2). Φ is a permutation matrix, so K = ΦΦᵀ = I and
// λ_min = 1 (Dim = n and u = n do not force rank Φ < n); the fixed matrix
// K − λ_min I is 0.
func TestMinEigenvalueSquareFullRank(t *testing.T) {
	t.Parallel()
	f, err := NewFeatures(K1, 3, []triplet.Triplet{tr(0, 1, 2), tr(1, 0, 2), tr(2, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := MinEigenvalue(f, nil); !(math.Abs(got-1) <= 1e-12) {
		t.Errorf("λ_min = %v, want 1", got)
	}
	k := Matrix(f, true)
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			if !(math.Abs(k.At(a, b)) <= 1e-12) {
				t.Errorf("fixed K[%d,%d] = %v, want 0", a, b, k.At(a, b))
			}
		}
	}
}

// TestLanczosMinSteps runs lanczosMin on diag(1, 2, ..., n). With n = 30 and
// a cap of 400 steps the Krylov space becomes invariant after at most 30
// steps and θ is exact: 1, with residual 0. With n = 1000 and a cap of 10
// steps it stops after exactly 10 applications of the operator, not
// converged: θ is a Ritz value, so 1 ≤ θ ≤ 1000, and the residual bound
// r > 0 puts an eigenvalue (here any integer) within r of θ.
func TestLanczosMinSteps(t *testing.T) {
	t.Parallel()
	// diag(i, i) = i+1; the size comes from dst.
	diag := func(calls *int) func(dst, src []float64) {
		return func(dst, src []float64) {
			*calls++
			for i := range dst {
				dst[i] = float64(i+1) * src[i]
			}
		}
	}
	var calls int
	theta, resid := lanczosMin(diag(&calls), 30, 400)
	if !(math.Abs(theta-1) <= 1e-9) || resid != 0 || calls > 30 {
		t.Errorf("n=30: θ = %v, r = %v after %d steps; want 1, 0, at most 30", theta, resid, calls)
	}
	calls = 0
	theta, resid = lanczosMin(diag(&calls), 1000, 10)
	if calls != 10 || !(theta >= 1 && theta <= 1000) || !(resid > 0) ||
		!(math.Abs(theta-math.Round(theta)) <= resid) {
		t.Errorf("n=1000, 10 steps: θ = %v, r = %v after %d steps; want a Ritz value in [1, 1000] with r > 0 after 10", theta, resid, calls)
	}
}
