package basis

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Blobs draws n points from a mixture of k spherical Gaussian clusters of
// standard deviation sd in d dimensions, the centres uniform in the box
// [-box, box]^d, the clusters of (nearly) equal size: point i belongs to
// cluster i mod k. It returns the points and their cluster labels.
//
// Anderton et al. (section 3, "Datasets") describe their 3dgmm and 5dgmm
// sets only as "random draws of 500 points from Gaussian mixtures"; Blobs
// mimics the common way of drawing such sets (scikit-learn's make_blobs
// defaults are k = 3, sd = 1, box = 10), and the reproductions use it with
// those defaults. triplet.GaussianMixture places the centres on a sphere
// instead; the reproductions report both.
func Blobs(rng *rand.Rand, n, d, k int, sd, box float64) (x *mat.Dense, labels []int) {
	if n < 1 || d < 1 || k < 1 {
		panic("basis: Blobs needs n, d, k >= 1")
	}
	centres := make([][]float64, k)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = box * (2*rng.Float64() - 1)
		}
	}
	x = mat.NewDense(n, d, nil)
	labels = make([]int, n)
	for i := range n {
		c := i % k
		labels[i] = c
		row := x.RawRowView(i)
		for j := range row {
			row[j] = centres[c][j] + sd*rng.NormFloat64()
		}
	}
	return x, labels
}
