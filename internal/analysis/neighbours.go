package analysis

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

// NeighboursByDistance returns, for every row of x, the indices of its k
// nearest other rows by Euclidean distance, nearest first (ties by index).
func NeighboursByDistance(x *mat.Dense, k int) [][]int {
	n, _ := x.Dims()
	return nearest(n, k, func(i, j int) float64 { return triplet.SqDist(x, i, j) })
}

// NeighboursBySimilarity returns, for every item of the kernel matrix K, the
// indices of the k other items with the largest kernel-induced similarity,
// that is the smallest kernel-induced distance, nearest first.
func NeighboursBySimilarity(K mat.Symmetric, k int) [][]int {
	n := K.SymmetricDim()
	return nearest(n, k, func(i, j int) float64 { return kernel.Distance(K, i, j) })
}

func nearest(n, k int, dist func(i, j int) float64) [][]int {
	k = min(k, n-1)
	out := make([][]int, n)
	type cand struct {
		j int
		d float64
	}
	cs := make([]cand, 0, n)
	for i := range n {
		cs = cs[:0]
		for j := range n {
			if j != i {
				cs = append(cs, cand{j, dist(i, j)})
			}
		}
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.j, b.j)) })
		out[i] = make([]int, k)
		for r := range k {
			out[i][r] = cs[r].j
		}
	}
	return out
}
