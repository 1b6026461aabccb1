package kernel

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// maxFeatureDim is the largest feature dimension for which kernel PCA goes
// through the Dim×Dim covariance of Φ instead of the n×n kernel matrix.
const maxFeatureDim = 3000

// maxDenseEigen is the largest n for which kernel PCA of an n×n matrix uses
// a full dense eigendecomposition rather than subspace iteration.
const maxDenseEigen = 1500

// eigenTol is the relative residual to which eigenpairs are computed.
const eigenTol = 1e-9

// PCA returns the centered kernel PCA of f to m components (Schölkopf et al.,
// as used in Kleindessner & von Luxburg 2017, section 4): the n×m matrix of
// scores U_k·sqrt(μ_k), where μ_1 ≥ … ≥ μ_m are the largest eigenvalues of
// the centered kernel matrix HKH (H = I − 11ᵀ/n) and U_k its unit
// eigenvectors. Each column's sign is fixed so that its entry of largest
// magnitude is positive.
//
// When the feature space is small (Dim ≤ min(n, 3000), as in a landmark
// design, section 2.4) the scores come from the Dim×Dim covariance ΦcᵀΦc of the
// centered feature matrix Φc = Φ − 1μᵀ (the SVD of Φc: its right singular
// vectors V give the scores Φc V = U Σ), so the cost is O(Σ_a nnz_a² + Dim²)
// and no n×n matrix is formed. Otherwise the n×n kernel matrix, then the
// smaller one, is built.
//
// PCA leaves out the diagonal-dominance fix; see PCAFixed.
func (f *Features) PCA(m int) (*mat.Dense, error) { return f.pca(m, false) }

// PCAFixed is PCA of the fixed kernel K − λ_min I (section 2.1). Centering
// commutes with the shift on the eigenvectors orthogonal to 1, so the scores
// are those of PCA with μ_k replaced by μ_k − λ_min; λ_min = 0 (no change)
// whenever the items outnumber the feature columns.
func (f *Features) PCAFixed(m int) (*mat.Dense, error) { return f.pca(m, true) }

func (f *Features) pca(m int, fix bool) (*mat.Dense, error) {
	n := f.N
	if m < 1 || m > n {
		return nil, fmt.Errorf("kernel: pca: %d components of %d items", m, n)
	}
	if f.Dim > maxFeatureDim || f.Dim > n || m > f.Dim {
		k := Matrix(f, false)
		shift := 0.0
		if fix {
			shift = MinEigenvalue(f, k)
		}
		return kernelPCA(k, m, shift)
	}
	d := f.Dim
	// Column means μ and the upper triangle of G = ΦᵀΦ, accumulated per
	// goroutine and summed.
	p := runtime.GOMAXPROCS(0)
	parts := make([][]float64, p)
	means := make([][]float64, p)
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		lo, hi := w*n/p, (w+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := make([]float64, d*d)
			mu := make([]float64, d)
			for a := lo; a < hi; a++ {
				cols, vals := f.Row(a)
				for i, ci := range cols {
					vi := vals[i]
					mu[ci] += vi
					gr := g[ci*d : (ci+1)*d]
					for j := i; j < len(cols); j++ {
						gr[cols[j]] += vi * vals[j]
					}
				}
			}
			parts[w], means[w] = g, mu
		}()
	}
	wg.Wait()
	g, mu := parts[0], means[0]
	for w := 1; w < p; w++ {
		for i, v := range parts[w] {
			g[i] += v
		}
		for i, v := range means[w] {
			mu[i] += v
		}
	}
	for i := range mu {
		mu[i] /= float64(n)
	}
	// C = ΦcᵀΦc = G − n μμᵀ, full symmetric.
	c := mat.NewSymDense(d, g)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			g[i*d+j] -= float64(n) * mu[i] * mu[j]
			g[j*d+i] = g[i*d+j]
		}
	}
	vals, v, err := topEigen(func(dst, src *mat.Dense) { dst.Mul(c, src) }, d, m, eigenTol, 5000)
	if err != nil {
		return nil, fmt.Errorf("kernel: pca: %w", err)
	}
	// Scores Φc V = Φ V − 1 (μᵀV).
	muV := make([]float64, m)
	for k := 0; k < m; k++ {
		for i := 0; i < d; i++ {
			muV[k] += mu[i] * v.At(i, k)
		}
	}
	vr := v.RawMatrix()
	scores := mat.NewDense(n, m, nil)
	parallelRange(n, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			row := scores.RawRowView(a)
			cols, fv := f.Row(a)
			for i, ci := range cols {
				x := fv[i]
				vrow := vr.Data[ci*vr.Stride : ci*vr.Stride+m]
				for k := range row {
					row[k] += x * vrow[k]
				}
			}
			for k := range row {
				row[k] -= muV[k]
			}
		}
	})
	if fix {
		shift := MinEigenvalue(f, nil)
		if shift > 0 {
			for k := 0; k < m; k++ {
				s := 0.0
				if vals[k] > shift {
					s = math.Sqrt((vals[k] - shift) / vals[k])
				}
				for a := 0; a < n; a++ {
					scores.Set(a, k, s*scores.At(a, k))
				}
			}
		}
	}
	fixSigns(scores)
	return scores, nil
}

// KernelPCA returns the centered kernel PCA of any kernel matrix to m
// components: the n×m scores U_k·sqrt(μ_k) of the m largest eigenvalues μ_k
// of HKH (negative eigenvalues give zero scores), each column's largest
// entry positive.
func KernelPCA(k mat.Symmetric, m int) (*mat.Dense, error) {
	n := k.SymmetricDim()
	if m < 1 || m > n {
		return nil, fmt.Errorf("kernel: pca: %d components of %d items", m, n)
	}
	return kernelPCA(k, m, 0)
}

func kernelPCA(k mat.Symmetric, m int, shift float64) (*mat.Dense, error) {
	n := k.SymmetricDim()
	// Kc = H K H: subtract row means and column means, add the grand mean.
	kc := mat.NewSymDense(n, nil)
	rowMean := make([]float64, n)
	var all float64
	for i := 0; i < n; i++ {
		var s float64
		for j := 0; j < n; j++ {
			s += k.At(i, j)
		}
		rowMean[i] = s / float64(n)
		all += s
	}
	all /= float64(n) * float64(n)
	raw := kc.RawSymmetric().Data
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j < n; j++ {
				raw[i*n+j] = k.At(i, j) - rowMean[i] - rowMean[j] + all
			}
		}
	})
	var (
		vals []float64
		u    *mat.Dense
	)
	if n <= maxDenseEigen {
		// A full decomposition costs O(n³) but no more: subspace iteration
		// needs thousands of steps when the top eigenvalues lie close
		// together, as they do for k2 from random answers (38 s at n = 1000,
		// against 0.7 s here).
		var eig mat.EigenSym
		if !eig.Factorize(kc, true) {
			return nil, fmt.Errorf("kernel: pca: eigendecomposition did not converge")
		}
		all := eig.Values(nil) // ascending
		var vec mat.Dense
		eig.VectorsTo(&vec)
		vals = make([]float64, m)
		u = mat.NewDense(n, m, nil)
		for c := 0; c < m; c++ {
			vals[c] = all[n-1-c]
			for i := 0; i < n; i++ {
				u.Set(i, c, vec.At(i, n-1-c))
			}
		}
	} else {
		var err error
		vals, u, err = topEigen(func(dst, src *mat.Dense) { dst.Mul(kc, src) }, n, m, eigenTol, 5000)
		if err != nil {
			return nil, fmt.Errorf("kernel: pca: %w", err)
		}
	}
	for c := 0; c < m; c++ {
		s := math.Sqrt(max(vals[c]-shift, 0))
		for i := 0; i < n; i++ {
			u.Set(i, c, s*u.At(i, c))
		}
	}
	fixSigns(u)
	return u, nil
}

// fixSigns flips columns so that each one's entry of largest magnitude is
// positive, making scores comparable across runs and methods.
func fixSigns(x *mat.Dense) {
	r, c := x.Dims()
	for j := 0; j < c; j++ {
		best := 0.0
		for i := 0; i < r; i++ {
			if v := x.At(i, j); math.Abs(v) > math.Abs(best) {
				best = v
			}
		}
		if best < 0 {
			for i := 0; i < r; i++ {
				x.Set(i, j, -x.At(i, j))
			}
		}
	}
}
