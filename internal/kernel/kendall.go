// Package kernel computes kernels between items from similarity triplets
// (Kleindessner & von Luxburg 2017, "Kernel functions based on triplet
// comparisons": k1 of eq. 2-3 and k2 of eq. 5, the diagonal-dominance fix of
// section 2.1, the compressed landmark feature space of section 2.4), the
// Kendall and Mallows kernels between rankings (Jiao & Vert 2016, "The
// Kendall and Mallows kernels for permutations": eq. 2-4, Algorithms 3 and 4)
// and kernel methods on top of any kernel matrix: centered kernel PCA, kernel
// k-means (Jiao & Vert, Algorithm 1), complete-linkage clustering, purity and
// silhouette.
//
// The package is pure Go: no SQL, no HTTP, deterministic for a seed.
package kernel

import (
	"math"
	"slices"
)

// KendallTau returns the tie-adjusted Kendall tau-b between two score vectors
// of the same length (Jiao & Vert 2016, section 8):
//
//	tau_b(x, y) = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2)),
//
// where n_0 = C(n, 2), n_c and n_d count the concordant and discordant pairs
// (a pair tied in x or in y is neither), and n_1, n_2 are the numbers of tied
// pairs in x and in y. Without ties it equals the Kendall kernel of eq. 3.
//
// It runs in O(n log n) with Knight's merge-sort counting: sort the pairs by
// (x, y), then count the inversions of y while merge-sorting it.
//
// When x or y is constant (or n < 2) the denominator is zero and KendallTau
// returns 0, the convention 0/0 = 0 used for kernels throughout this package
// (the feature vector of a constant vector is zero). If any value is NaN the
// result is NaN. KendallTau panics if the lengths differ.
func KendallTau(x, y []float64) float64 {
	c := kendallCounts(x, y)
	if c.nan {
		return math.NaN()
	}
	den := math.Sqrt(float64(c.n0-c.n1)) * math.Sqrt(float64(c.n0-c.n2))
	if den == 0 {
		return 0
	}
	return float64(c.nc-c.nd) / den
}

// KendallKernel returns the Kendall kernel of eq. 3 of Jiao & Vert (2016),
// (n_c − n_d)/C(n, 2), between two rankings given as score vectors (item i
// has score x[i]; a higher score is a higher rank). A pair tied in either
// vector is neither concordant nor discordant (section 5, eq. 9-10), so with
// ties the value is below 1 in magnitude; without ties it equals KendallTau.
// It runs in O(n log n), returns 0 for n < 2 and NaN if a value is NaN, and
// panics if the lengths differ.
func KendallKernel(x, y []float64) float64 {
	c := kendallCounts(x, y)
	if c.nan {
		return math.NaN()
	}
	if c.n0 == 0 {
		return 0
	}
	return float64(c.nc-c.nd) / float64(c.n0)
}

// Discordant returns n_d(x, y), the number of pairs ordered one way by x and
// the other by y (the Kendall tau distance for permutations), in
// O(n log n). It panics if the lengths differ or a value is NaN.
func Discordant(x, y []float64) int64 {
	c := kendallCounts(x, y)
	if c.nan {
		panic("kernel: Discordant: NaN score")
	}
	return c.nd
}

// Mallows returns the Mallows kernel exp(−λ n_d(x, y)) of eq. 2 of Jiao &
// Vert (2016), positive definite for every λ ≥ 0 (Theorem 1). It panics if
// λ < 0, the lengths differ or a value is NaN.
func Mallows(x, y []float64, lambda float64) float64 {
	if lambda < 0 || math.IsNaN(lambda) {
		panic("kernel: Mallows: negative λ")
	}
	return math.Exp(-lambda * float64(Discordant(x, y)))
}

// counts are the pair counts behind Kendall's tau: n0 = C(n, 2) pairs, nc
// concordant, nd discordant, n1 and n2 tied in x and in y.
type counts struct {
	n0, nc, nd, n1, n2 int64
	nan                bool
}

// kendallCounts computes the counts in O(n log n) with Knight's (1966)
// algorithm: sort the pairs by (x, y), then count the inversions of y while
// merge-sorting it.
func kendallCounts(x, y []float64) counts {
	if len(x) != len(y) {
		panic("kernel: Kendall: length mismatch")
	}
	n := len(x)
	if n < 2 {
		return counts{}
	}
	p := make([]pair, n)
	for i := range p {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return counts{nan: true}
		}
		p[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(p, func(a, b pair) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		case a.y < b.y:
			return -1
		case a.y > b.y:
			return 1
		}
		return 0
	})
	// n1: pairs tied in x; n3: pairs tied in both x and y.
	var n1, n3 int64
	ys := make([]float64, n)
	runX, runXY := int64(1), int64(1)
	ys[0] = p[0].y
	for i := 1; i < n; i++ {
		ys[i] = p[i].y
		if p[i].x == p[i-1].x {
			runX++
			if p[i].y == p[i-1].y {
				runXY++
			} else {
				n3 += runXY * (runXY - 1) / 2
				runXY = 1
			}
		} else {
			n1 += runX * (runX - 1) / 2
			n3 += runXY * (runXY - 1) / 2
			runX, runXY = 1, 1
		}
	}
	n1 += runX * (runX - 1) / 2
	n3 += runXY * (runXY - 1) / 2

	// Discordant pairs: strict inversions of y in (x, y) order. Pairs tied
	// in x are already sorted by y, so they count none.
	nd := mergeCount(ys, make([]float64, n))

	// n2: pairs tied in y, from the now sorted ys.
	var n2 int64
	run := int64(1)
	for i := 1; i < n; i++ {
		if ys[i] == ys[i-1] {
			run++
		} else {
			n2 += run * (run - 1) / 2
			run = 1
		}
	}
	n2 += run * (run - 1) / 2

	n0 := int64(n) * int64(n-1) / 2
	// Pairs tied in neither: n0 − n1 − n2 + n3 = n_c + n_d.
	return counts{n0: n0, nc: n0 - n1 - n2 + n3 - nd, nd: nd, n1: n1, n2: n2}
}

type pair struct{ x, y float64 }

// mergeCount sorts a in place (stable, ascending) and returns the number of
// pairs i < j with a[i] > a[j]. buf must have the length of a.
// Bottom-up, so no recursion and no allocation.
func mergeCount(a, buf []float64) int64 {
	n := len(a)
	var inv int64
	src, dst := a, buf
	for width := 1; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid := min(lo+width, n)
			hi := min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if src[j] < src[i] {
					// src[j] is below every remaining left element.
					inv += int64(mid - i)
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	return inv
}
