package embed

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Normalize stores in dst the normal form of the embedding x (one row per
// item), which every stored, shown and exported embedding takes:
//
//  1. centred: the column means are 0;
//  2. rotated to its principal axes: column c is the c-th principal
//     component (the eigenvectors of XᵀX of the centred X, largest
//     variance first), so the columns are uncorrelated and the first shows
//     most of the spread;
//  3. scaled to unit root-mean-square radius: (1/n)·Σ_i ‖x_i‖² = 1, so
//     distances read in units of the embedding's typical radius whatever
//     the method's own scale (t-STE's raw radius depends on λ and the
//     number of triplets; SOE's on its margin);
//  4. signs fixed: each column is flipped so that its third moment Σ_i x_ic³
//     is positive (the long tail to the right), or, when that is zero, so
//     that its entry of largest magnitude (the first such row) is positive.
//
// Translation, rotation, reflection and uniform scaling keep every order of
// distances, so the triplet error, neighbours and rank statistics are those
// of x. The result depends on x alone (not on the item order beyond ties in
// step 4). A zero embedding stays zero. No |coordinate| exceeds √n (the
// whole radius on one item), so up to 100 items none exceeds 10; beyond,
// one above 10 means an item lies more than 10 typical radii out.
//
// dst may be x, or empty (it is then sized n × d); otherwise it must be
// n × d, as x.
func Normalize(dst, x *mat.Dense) {
	n, d := x.Dims()
	if !dst.IsEmpty() {
		if r, c := dst.Dims(); r != n || c != d {
			panic(mat.ErrShape)
		}
	}
	c := mat.DenseCopyOf(x)
	centre(c)
	var cov mat.SymDense
	cov.SymOuterK(1, c.T())
	var eig mat.EigenSym
	y := mat.NewDense(n, d, nil)
	if eig.Factorize(&cov, true) {
		var v mat.Dense
		eig.VectorsTo(&v)
		// EigenSym orders the eigenvalues ascending: reverse the columns.
		rev := mat.NewDense(d, d, nil)
		for k := range d {
			for r := range d {
				rev.Set(r, k, v.At(r, d-1-k))
			}
		}
		y.Mul(c, rev)
	} else {
		y.Copy(c) // not expected for a finite symmetric matrix; keep the axes
	}
	var ss float64
	for k := range d {
		var m3, big float64
		arg := -1
		for i := range n {
			v := y.At(i, k)
			m3 += v * v * v
			ss += v * v
			if math.Abs(v) > big {
				big, arg = math.Abs(v), i
			}
		}
		if m3 < 0 || m3 == 0 && arg >= 0 && y.At(arg, k) < 0 {
			for i := range n {
				y.Set(i, k, -y.At(i, k))
			}
		}
	}
	if r := math.Sqrt(ss / float64(n)); r > 0 {
		y.Scale(1/r, y)
	}
	if dst.IsEmpty() {
		dst.ReuseAs(n, d)
	}
	dst.Copy(y)
}

// RMSRadius returns √((1/n)·Σ_i ‖x_i − x̄‖²), the root-mean-square distance
// of the points from their centroid: 1 after Normalize, and the raw scale
// of a fit before it.
func RMSRadius(x *mat.Dense) float64 {
	c := mat.DenseCopyOf(x)
	centre(c)
	n, _ := c.Dims()
	var ss float64
	for _, v := range c.RawMatrix().Data {
		ss += v * v
	}
	return math.Sqrt(ss / float64(n))
}
