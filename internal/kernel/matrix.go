package kernel

import (
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// Matrix returns the full n×n kernel matrix K_ab = Φ(x_a)ᵀ Φ(x_b) (eq. 3 or
// 5), computed as a sparse product in parallel over runtime.GOMAXPROCS(0)
// goroutines. With fix, it returns the diagonal-dominance fix of section 2.1,
// K − λ_min(K)·I, which is still positive semidefinite and has smallest
// eigenvalue 0 (see MinEigenvalue for how λ_min is found).
func Matrix(f *Features, fix bool) *mat.SymDense {
	n := f.N
	data := make([]float64, n*n)
	// Column-major copy of Φ: for every column the rows holding it, in
	// ascending order.
	ccol, u := f.compact()
	cptr := make([]int, u+1)
	for _, c := range ccol {
		cptr[c+1]++
	}
	for c := 0; c < u; c++ {
		cptr[c+1] += cptr[c]
	}
	crow := make([]int32, len(f.col))
	cval := make([]float64, len(f.col))
	fill := make([]int, u)
	copy(fill, cptr[:u])
	for a := 0; a < n; a++ {
		lo, hi := f.rowPtr[a], f.rowPtr[a+1]
		for e := lo; e < hi; e++ {
			c := ccol[e]
			crow[fill[c]] = int32(a)
			cval[fill[c]] = f.val[e]
			fill[c]++
		}
	}
	// Upper triangle, row by row; rows are handed out in small chunks since
	// the work per row shrinks along the triangle.
	var next atomic.Int64
	const chunk = 16
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n {
					return
				}
				for a := lo; a < min(lo+chunk, n); a++ {
					row := data[a*n : (a+1)*n]
					for e := f.rowPtr[a]; e < f.rowPtr[a+1]; e++ {
						c, v := ccol[e], f.val[e]
						rs := crow[cptr[c]:cptr[c+1]]
						ws := cval[cptr[c]:cptr[c+1]]
						// Rows b ≥ a only.
						s := sort.Search(len(rs), func(i int) bool { return int(rs[i]) >= a })
						ws = ws[s:]
						for i, b := range rs[s:] {
							row[b] += v * ws[i]
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	mirror(data, n)
	k := mat.NewSymDense(n, data)
	if fix {
		lmin := MinEigenvalue(f, k)
		for a := 0; a < n; a++ {
			data[a*n+a] -= lmin
		}
	}
	return k
}

// denseEigenMax is the largest n for which MinEigenvalue uses the dense
// eigenvalue solver (a variable so that tests can exercise both paths).
var denseEigenMax = 2000

// mirror copies the upper triangle of the row-major n×n data to the lower,
// in blocks, in parallel.
func mirror(data []float64, n int) {
	const bs = 64
	nb := (n + bs - 1) / bs
	parallelRange(nb, func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			for bj := 0; bj <= bi; bj++ {
				for i := bi * bs; i < min((bi+1)*bs, n); i++ {
					for j := bj * bs; j < min((bj+1)*bs, i); j++ {
						data[i*n+j] = data[j*n+i]
					}
				}
			}
		}
	})
}

// MinEigenvalue returns λ_min of the kernel matrix of f, the shift of the
// diagonal-dominance fix (section 2.1). k may be the matrix already computed
// by Matrix(f, false), or nil.
//
// K = ΦΦᵀ is positive semidefinite, so λ_min ≥ 0, and λ_min = 0 exactly when
// rank Φ < n: when there are more items than feature columns (a landmark
// design with n > C(|L|,2) or |L|²) or than columns in use, or an item has a
// zero feature vector.
// Otherwise λ_min is computed: exactly by a dense symmetric eigenvalue solver
// for n ≤ 2000, and for larger n by the Lanczos method (at most 400 steps,
// full reorthogonalisation) applied through the sparse Φ. Lanczos gives the
// smallest Ritz value θ ≥ λ_min and a residual bound r; MinEigenvalue then
// returns max(θ − r, 0), which errs on the safe side (a smaller shift keeps
// the fixed matrix positive semidefinite) and equals λ_min to the residual
// tolerance 1e-10·‖K‖ when Lanczos has converged.
func MinEigenvalue(f *Features, k *mat.SymDense) float64 {
	n := f.N
	if n == 0 || f.Dim < n {
		return 0
	}
	if _, u := f.compact(); u < n {
		return 0 // rank Φ ≤ number of columns in use < n
	}
	for a := 0; a < n; a++ {
		if f.rowPtr[a] == f.rowPtr[a+1] {
			return 0
		}
	}
	if n <= denseEigenMax {
		if k == nil {
			k = Matrix(f, false)
		}
		var e mat.EigenSym
		if e.Factorize(k, false) {
			return max(e.Values(nil)[0], 0)
		}
	}
	ccol, u := f.compact()
	t := make([]float64, u)
	apply := func(dst, src []float64) { f.mulGramVec(dst, src, ccol, t) }
	theta, resid := lanczosMin(apply, n, lanczosMaxIter)
	return max(theta-resid, 0)
}

// lanczosMaxIter caps the Lanczos steps of MinEigenvalue for large n.
const lanczosMaxIter = 400

// lanczosMin runs the Lanczos method with full reorthogonalisation on the
// symmetric operator apply of size n from a seeded random start, and
// returns its smallest Ritz value θ and the residual bound r = β_j|s_j| of
// the Ritz pair. θ ≥ λ_min always, and an eigenvalue lies within r of θ; it
// stops when r ≤ 1e-10·‖T‖, when the Krylov space is invariant (then θ is
// exact), or after maxIter steps.
func lanczosMin(apply func(dst, src []float64), n, maxIter int) (theta, resid float64) {
	maxIter = min(maxIter, n)
	rng := triplet.NewRand(2)
	q := make([][]float64, 0, maxIter)
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	floats.Scale(1/floats.Norm(v, 2), v)
	var alpha, beta []float64
	w := make([]float64, n)
	for j := 0; j < maxIter; j++ {
		q = append(q, v)
		apply(w, v)
		a := floats.Dot(v, w)
		alpha = append(alpha, a)
		projectOut(w, q) // full reorthogonalisation
		b := floats.Norm(w, 2)
		last := j == maxIter-1 || b <= 1e-12*math.Abs(a)+1e-300
		if last || (j+1)%25 == 0 {
			theta, resid = tridiagMin(alpha, beta, b)
			tn := 0.0
			for _, x := range alpha {
				tn = max(tn, math.Abs(x))
			}
			if b <= 1e-12*math.Abs(a)+1e-300 {
				return theta, 0
			}
			if last || resid <= 1e-10*tn {
				return theta, resid
			}
		}
		beta = append(beta, b)
		v = make([]float64, n)
		copy(v, w)
		floats.Scale(1/b, v)
	}
	return theta, resid
}

// tridiagMin returns the smallest eigenvalue of the Lanczos tridiagonal
// matrix (diagonal alpha, off-diagonal beta) and the residual bound
// next·|last component of its eigenvector|.
func tridiagMin(alpha, beta []float64, next float64) (float64, float64) {
	j := len(alpha)
	t := mat.NewSymDense(j, nil)
	for i := 0; i < j; i++ {
		t.SetSym(i, i, alpha[i])
		if i+1 < j {
			t.SetSym(i, i+1, beta[i])
		}
	}
	var e mat.EigenSym
	if !e.Factorize(t, true) {
		return alpha[0], math.Inf(1)
	}
	var vec mat.Dense
	e.VectorsTo(&vec)
	return e.Values(nil)[0], next * math.Abs(vec.At(j-1, 0))
}

// mulGramVec sets dst = Φ Φᵀ src through the sparse rows; t is a buffer of
// the number of columns in use.
func (f *Features) mulGramVec(dst, src []float64, ccol []int32, t []float64) {
	for i := range t {
		t[i] = 0
	}
	for a := 0; a < f.N; a++ {
		s := src[a]
		for e := f.rowPtr[a]; e < f.rowPtr[a+1]; e++ {
			t[ccol[e]] += f.val[e] * s
		}
	}
	parallelRange(f.N, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			var d float64
			for e := f.rowPtr[a]; e < f.rowPtr[a+1]; e++ {
				d += f.val[e] * t[ccol[e]]
			}
			dst[a] = d
		}
	})
}

// compact numbers the columns in use 0..u-1 (in column order) and returns
// the number of each stored entry; computed once.
func (f *Features) compact() ([]int32, int) {
	f.compactOnce.Do(func() {
		var used []int
		if f.Dim <= 4*len(f.col)+1024 {
			mark := make([]int32, f.Dim)
			for _, c := range f.col {
				mark[c] = 1
			}
			u := int32(0)
			for c := range mark {
				if mark[c] != 0 {
					u++
					mark[c] = u
				}
			}
			f.ccol = make([]int32, len(f.col))
			for e, c := range f.col {
				f.ccol[e] = mark[c] - 1
			}
			f.ncol = int(u)
			return
		}
		used = slices.Clone(f.col)
		slices.Sort(used)
		used = slices.Compact(used)
		f.ccol = make([]int32, len(f.col))
		for e, c := range f.col {
			i, _ := slices.BinarySearch(used, c)
			f.ccol[e] = int32(i)
		}
		f.ncol = len(used)
	})
	return f.ccol, f.ncol
}
