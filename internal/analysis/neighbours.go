package analysis

import (
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
	out := make([][]int, n)
	for i := range n {
		out[i] = triplet.NearestBy(nil, n, i, k, func(j int) float64 { return dist(i, j) })
	}
	return out
}
