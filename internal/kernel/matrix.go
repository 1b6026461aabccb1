package kernel

import (
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
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
	fill = nil
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
// design with n > C(|L|,2) or |L|²) or an item has a zero feature vector.
// Otherwise λ_min is computed: by a dense symmetric eigenvalue solver for
// n ≤ 2000, and for larger n by subspace iteration on the shifted operator
// σI − ΦΦᵀ (σ ≥ λ_max), applied through the sparse Φ, to a relative residual
// of 1e-9 — so the fixed matrix is positive semidefinite up to that
// tolerance.
func MinEigenvalue(f *Features, k *mat.SymDense) float64 {
	n := f.N
	if n == 0 || f.Dim < n {
		return 0
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
	// σ slightly above λ_max, estimated first.
	apply := func(dst, src *mat.Dense) { f.mulGram(dst, src) }
	top, _, err := topEigen(apply, n, 1, 1e-9, 2000)
	if err != nil {
		return 0
	}
	sigma := top[0] * (1 + 1e-9)
	shifted := func(dst, src *mat.Dense) {
		f.mulGram(dst, src)
		dst.Scale(-1, dst)
		dst.Add(dst, scaled(sigma, src))
	}
	v, _, err := topEigen(shifted, n, 1, 1e-9, 5000)
	if err != nil {
		return 0
	}
	return max(sigma-v[0], 0)
}

func scaled(s float64, a *mat.Dense) *mat.Dense {
	var b mat.Dense
	b.Scale(s, a)
	return &b
}

// mulGram sets dst = Φ Φᵀ src for n×p matrices, through the sparse rows.
func (f *Features) mulGram(dst, src *mat.Dense) {
	_, p := src.Dims()
	ccol, u := f.compact()
	// t = Φᵀ src over the used columns only.
	t := make([]float64, u*p)
	for a := 0; a < f.N; a++ {
		s := src.RawRowView(a)
		for e := f.rowPtr[a]; e < f.rowPtr[a+1]; e++ {
			c, v := int(ccol[e]), f.val[e]
			tc := t[c*p : (c+1)*p]
			for j := range tc {
				tc[j] += v * s[j]
			}
		}
	}
	parallelRange(f.N, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			d := dst.RawRowView(a)
			for j := range d {
				d[j] = 0
			}
			for e := f.rowPtr[a]; e < f.rowPtr[a+1]; e++ {
				c, v := int(ccol[e]), f.val[e]
				tc := t[c*p : (c+1)*p]
				for j := range d {
					d[j] += v * tc[j]
				}
			}
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
