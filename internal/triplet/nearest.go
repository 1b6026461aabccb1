package triplet

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Nearest returns, in dst[:0], the k rows of x nearest to row i by
// Euclidean distance, i itself excluded, nearest first with ties broken
// towards the lower index; k is capped at the n − 1 other rows.
func Nearest(dst []int, x *mat.Dense, i, k int) []int {
	n, _ := x.Dims()
	return NearestBy(dst, n, i, k, func(j int) float64 { return SqDist(x, i, j) })
}

// NearestBy is Nearest under any distance from item i to the n items
// (any monotone transform of it gives the same order).
func NearestBy(dst []int, n, i, k int, dist func(j int) float64) []int {
	type cand struct {
		d float64
		j int
	}
	cs := make([]cand, 0, max(n-1, 0))
	for j := range n {
		if j != i {
			cs = append(cs, cand{dist(j), j})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.j, b.j)) })
	dst = dst[:0]
	for _, c := range cs[:min(max(k, 0), len(cs))] {
		dst = append(dst, c.j)
	}
	return dst
}
