package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// topEigen returns the m largest eigenvalues (descending) and their
// eigenvectors (as the columns of a dim×m matrix) of a symmetric positive
// semidefinite operator given by apply (dst = A·src for dim×p matrices).
//
// It runs subspace iteration with a Rayleigh–Ritz step on a block of
// p = m + 10 vectors (fewer if dim is small) from a seeded random start,
// until every wanted Ritz pair has residual ‖A x − θ x‖ ≤ tol·θ₁, or returns
// an error after maxIter iterations. When p = dim the first iteration is
// exact.
func topEigen(apply func(dst, src *mat.Dense), dim, m int, tol float64, maxIter int) ([]float64, *mat.Dense, error) {
	if m < 1 || m > dim {
		panic(fmt.Sprintf("kernel: topEigen: %d components of a %d-dimensional operator", m, dim))
	}
	p := min(dim, m+10)
	rng := triplet.NewRand(1)
	q := mat.NewDense(dim, p, nil)
	for i := 0; i < dim; i++ {
		for j := 0; j < p; j++ {
			q.Set(i, j, rng.NormFloat64())
		}
	}
	orthonormalize(q)
	z := mat.NewDense(dim, p, nil)
	h := mat.NewSymDense(p, nil)
	var hq mat.Dense
	var eig mat.EigenSym
	x := mat.NewDense(dim, p, nil)
	zw := mat.NewDense(dim, p, nil)
	var w mat.Dense
	for it := 0; it < maxIter; it++ {
		apply(z, q)
		// H = Qᵀ Z, symmetrised.
		hq.Mul(q.T(), z)
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				h.SetSym(i, j, (hq.At(i, j)+hq.At(j, i))/2)
			}
		}
		if !eig.Factorize(h, true) {
			return nil, nil, fmt.Errorf("kernel: eigen: Rayleigh–Ritz step did not converge")
		}
		vals := eig.Values(nil) // ascending
		eig.VectorsTo(&w)
		// Ritz vectors X = Q W, and Z W for the residuals, in descending order.
		x.Mul(q, &w)
		zw.Mul(z, &w)
		top := math.Abs(vals[p-1])
		done := true
		for k := 0; k < m; k++ {
			c := p - 1 - k
			var r2 float64
			for i := 0; i < dim; i++ {
				d := zw.At(i, c) - vals[c]*x.At(i, c)
				r2 += d * d
			}
			if math.Sqrt(r2) > tol*top {
				done = false
				break
			}
		}
		if done || p == dim {
			out := make([]float64, m)
			vecs := mat.NewDense(dim, m, nil)
			for k := 0; k < m; k++ {
				c := p - 1 - k
				out[k] = vals[c]
				for i := 0; i < dim; i++ {
					vecs.Set(i, k, x.At(i, c))
				}
			}
			return out, vecs, nil
		}
		q.Copy(z)
		orthonormalize(q)
	}
	return nil, nil, fmt.Errorf("kernel: eigen: subspace iteration did not converge in %d iterations", maxIter)
}

// orthonormalize replaces the columns of q by an orthonormal basis of their
// span (modified Gram–Schmidt, projectOut). A column that becomes
// numerically zero is replaced by a unit vector orthogonal to the others.
func orthonormalize(q *mat.Dense) {
	r, c := q.Dims()
	col := make([]float64, r)
	prev := make([][]float64, 0, c)
	for j := 0; j < c; j++ {
		mat.Col(col, j, q)
		orig := floats.Dot(col, col)
		projectOut(col, prev)
		nrm := floats.Dot(col, col)
		if nrm <= 1e-24*orig || nrm == 0 {
			// Replace by the first coordinate vector that is not in the span.
			for e := 0; e < r; e++ {
				clear(col)
				col[e] = 1
				projectOut(col, prev)
				if nrm = floats.Dot(col, col); nrm > 1e-6 {
					break
				}
			}
		}
		floats.Scale(1/math.Sqrt(nrm), col)
		q.SetCol(j, col)
		prev = append(prev, append([]float64(nil), col...))
	}
}

// projectOut removes from v its components along the orthonormal vectors
// of basis, in two passes of modified Gram–Schmidt (the second pass takes
// out what rounding left after the first): the one home of the
// reorthogonalisation of orthonormalize and of the Lanczos iteration.
func projectOut(v []float64, basis [][]float64) {
	for pass := 0; pass < 2; pass++ {
		for _, b := range basis {
			floats.AddScaled(v, -floats.Dot(v, b), b)
		}
	}
}
