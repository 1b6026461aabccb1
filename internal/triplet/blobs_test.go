package triplet

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestBlobs checks Blobs against its documentation: point i belongs to
// cluster i mod k, each cluster is Gaussian with standard deviation sd
// around a centre in [-box, box]^d. With 1,000 points per cluster the
// sample mean of a coordinate is within 4·sd/√1000 of the centre, and the
// sample standard deviation within 10% of sd (its own standard deviation
// is about sd/√2000, so 10% is 4.5 of them).
func TestBlobs(t *testing.T) {
	t.Parallel()
	const n, d, k, sd = 3000, 2, 3, 0.5
	for _, box := range []float64{10, 0} {
		x, labels := Blobs(NewRand(7), n, d, k, sd, box)
		if r, c := x.Dims(); r != n || c != d || len(labels) != n {
			t.Fatalf("box %v: %d×%d points, %d labels", box, r, c, len(labels))
		}
		tol := 4 * sd / math.Sqrt(n/k)
		for c := range k {
			for j := range d {
				var col []float64
				for i := range n {
					if labels[i] != i%k {
						t.Fatalf("box %v: point %d in cluster %d, want %d", box, i, labels[i], i%k)
					}
					if labels[i] == c {
						col = append(col, x.At(i, j))
					}
				}
				mean, s := stat.MeanStdDev(col, nil)
				if math.Abs(mean) > box+tol {
					t.Errorf("box %v: cluster %d coordinate %d: mean %.3f outside [-box, box]", box, c, j, mean)
				}
				if math.Abs(s-sd) > 0.1*sd {
					t.Errorf("box %v: cluster %d coordinate %d: sd %.3f, want %v", box, c, j, s, sd)
				}
			}
		}
	}
	if x, labels := Blobs(NewRand(1), 1, 1, 1, 1, 1); x.At(0, 0) == 0 || labels[0] != 0 { // the smallest valid call
		t.Errorf("one point: %v, label %d", x.At(0, 0), labels[0])
	}
	for _, bad := range [][3]int{{0, 2, 3}, {10, 0, 3}, {10, 2, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Blobs(n=%d, d=%d, k=%d) did not panic", bad[0], bad[1], bad[2])
				}
			}()
			Blobs(NewRand(1), bad[0], bad[1], bad[2], 1, 1)
		}()
	}
}
