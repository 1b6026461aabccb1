package kernel

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// diagOp is the operator diag(d) for topEigen.
func diagOp(d []float64) func(dst, src *mat.Dense) {
	return func(dst, src *mat.Dense) {
		r, c := src.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				dst.Set(i, j, d[i]*src.At(i, j))
			}
		}
	}
}

// rotatedOp returns A = Q diag(d) Qᵀ for a seeded random orthogonal Q, so
// that no eigenvector is a coordinate vector.
func rotatedOp(d []float64, seed uint64) *mat.SymDense {
	n := len(d)
	rng := triplet.NewRand(seed)
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	var qd mat.Dense
	qd.Mul(&q, mat.NewDiagDense(n, d))
	var a mat.Dense
	a.Mul(&qd, q.T())
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

// TestTopEigenFindsEigenvectorOutsideStart: diag(d) on 20 coordinates with
// the largest eigenvalue, 100, on the last one, outside the first p = 11
// coordinates. The start block is random, so subspace iteration finds it; a
// block of the first coordinate vectors would stay in their span (A maps it
// to itself) and return 11 instead.
func TestTopEigenFindsEigenvectorOutsideStart(t *testing.T) {
	t.Parallel()
	d := make([]float64, 20)
	for i := range d {
		d[i] = float64(i + 1)
	}
	d[19] = 100
	vals, vecs, err := topEigen(diagOp(d), 20, 1, 1e-10, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(vals[0]-100) <= 1e-8) || !(math.Abs(math.Abs(vecs.At(19, 0))-1) <= 1e-8) {
		t.Errorf("top eigenpair %v, |x_19| = %v; want 100 and e_19", vals[0], math.Abs(vecs.At(19, 0)))
	}
}

// TestTopEigenResidualContract checks the documented stopping rule on an
// operator with small eigenvalues close together (λ_i = 10⁻³·0.97^i, i =
// 0..39, in a random basis, so the iteration takes many steps): each
// returned pair has ‖A x − θ x‖ ≤ tol·θ₁ and θ within the same bound of the
// true eigenvalue, and the eigenvalues come out descending.
func TestTopEigenResidualContract(t *testing.T) {
	t.Parallel()
	const n, m, tol = 40, 3, 1e-9
	d := make([]float64, n)
	for i := range d {
		d[i] = 1e-3 * math.Pow(0.97, float64(i))
	}
	a := rotatedOp(d, 3)
	vals, x, err := topEigen(func(dst, src *mat.Dense) { dst.Mul(a, src) }, n, m, tol, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < m; k++ {
		col := mat.Col(nil, k, x)
		var ax mat.VecDense
		ax.MulVec(a, mat.NewVecDense(n, col))
		var r2 float64
		for i := 0; i < n; i++ {
			r := ax.AtVec(i) - vals[k]*col[i]
			r2 += r * r
		}
		if r := math.Sqrt(r2); !(r <= tol*vals[0]) {
			t.Errorf("pair %d: residual %v > tol·θ₁ = %v", k, r, tol*vals[0])
		}
		if !(math.Abs(vals[k]-d[k]) <= tol*d[0]) {
			t.Errorf("eigenvalue %d = %v, want %v", k, vals[k], d[k])
		}
	}
}

// TestTopEigenIterationCap: with maxIter = 3 on the slowly converging
// operator above subspace iteration does not finish; topEigen applies the
// operator exactly 3 times and returns an error naming the cap.
func TestTopEigenIterationCap(t *testing.T) {
	t.Parallel()
	d := make([]float64, 40)
	for i := range d {
		d[i] = math.Pow(0.97, float64(i))
	}
	a := rotatedOp(d, 4)
	calls := 0
	_, _, err := topEigen(func(dst, src *mat.Dense) {
		calls++
		if calls > 1000 {
			t.Fatalf("operator applied %d times with maxIter 3", calls)
		}
		dst.Mul(a, src)
	}, 40, 1, 1e-9, 3)
	if err == nil || !strings.Contains(err.Error(), "3 iterations") || calls != 3 {
		t.Errorf("err = %v after %d applications; want the cap error after 3", err, calls)
	}
}

// TestTopEigenZeroOperator: the zero operator has every residual 0, so the
// first iteration is accepted (eigenvalue 0) although p = 11 < dim = 20.
func TestTopEigenZeroOperator(t *testing.T) {
	t.Parallel()
	vals, _, err := topEigen(diagOp(make([]float64, 20)), 20, 1, 1e-9, 2)
	if err != nil || vals[0] != 0 {
		t.Errorf("zero operator: %v, %v; want eigenvalue 0 and no error", vals, err)
	}
}

// TestPCANoAnswers: a landmark design with 6 landmarks (Dim = C(6,2) = 15)
// and no answers yet: every feature vector is zero, so the covariance is
// zero and every PCA score is 0 (no error, no NaN).
func TestPCANoAnswers(t *testing.T) {
	t.Parallel()
	f, err := NewFeatures(K1, 20, nil, []int{0, 1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 2} {
		x, err := f.PCA(m)
		if err != nil {
			t.Fatalf("PCA(%d): %v", m, err)
		}
		for i := 0; i < 20; i++ {
			for k := 0; k < m; k++ {
				if x.At(i, k) != 0 {
					t.Fatalf("PCA(%d) score [%d,%d] = %v, want 0", m, i, k, x.At(i, k))
				}
			}
		}
	}
}
