package embed

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// The hand-worked examples below use the 1-D points truth = (0, 1, 3, 7)
// and est = (0, 3, 1, 7).
var (
	line    = mat.NewDense(4, 1, []float64{0, 1, 3, 7})
	shuffle = mat.NewDense(4, 1, []float64{0, 3, 1, 7})
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestTripletError(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{
		{Anchor: 0, Closer: 1, Farther: 2}, // 1 < 3: right
		{Anchor: 0, Closer: 2, Farther: 1}, // wrong
		{Anchor: 1, Closer: 0, Farther: 2}, // 1 < 2: right
		{Anchor: 2, Closer: 1, Farther: 3}, // 2 < 4: right
	}
	if got := TripletError(line, ts); !near(got, 0.25) {
		t.Errorf("TripletError = %g, want 1/4", got)
	}
	tie := mat.NewDense(3, 1, []float64{0, 1, -1})
	if got := TripletError(tie, ts[:1]); got != 1 {
		t.Errorf("a tie counts %g, want 1 (an error)", got)
	}
	if !math.IsNaN(TripletError(line, nil)) {
		t.Error("no triplets: want NaN")
	}
}

func TestMeanKendallTau(t *testing.T) {
	t.Parallel()
	// Worked by hand: from every point one of the three pairs of other
	// points is discordant, so tau = (2 − 1)/3 at each point.
	if got := MeanKendallTau(line, shuffle); !near(got, 1.0/3) {
		t.Errorf("MeanKendallTau = %g, want 1/3", got)
	}
	// A rotated, scaled, shifted copy ranks like the original.
	x, _ := randomProblem(1, 20, 2, 1)
	y := mat.NewDense(20, 2, nil)
	c, s := math.Cos(0.7), math.Sin(0.7)
	for i := range 20 {
		y.Set(i, 0, 3*(c*x.At(i, 0)-s*x.At(i, 1))+5)
		y.Set(i, 1, 3*(s*x.At(i, 0)+c*x.At(i, 1))-2)
	}
	if got := MeanKendallTau(x, y); !near(got, 1) {
		t.Errorf("similar copy: MeanKendallTau = %g, want 1", got)
	}
	if got := KNNPrecision(x, y, 0); !near(got, 1) {
		t.Errorf("similar copy: KNNPrecision = %g, want 1", got)
	}
	if got := Procrustes(x, y); math.Abs(got) > 1e-12 {
		t.Errorf("similar copy: Procrustes = %g, want 0", got)
	}
	if got := DistanceRMSE(x, y); math.Abs(got) > 1e-12 {
		t.Errorf("similar copy: DistanceRMSE = %g, want 0", got)
	}
}

func TestKNNPrecision(t *testing.T) {
	t.Parallel()
	// By hand: every nearest neighbour differs (k = 1), every pair of two
	// nearest neighbours agrees as a set (k = 2).
	if got := KNNPrecision(line, shuffle, 1); got != 0 {
		t.Errorf("k=1: %g, want 0", got)
	}
	if got := KNNPrecision(line, shuffle, 2); got != 1 {
		t.Errorf("k=2: %g, want 1", got)
	}
	for n, want := range map[int]int{2: 1, 8: 3, 9: 4, 1000: 10, 1024: 10, 1025: 11} {
		if got := DefaultK(n); got != want {
			t.Errorf("DefaultK(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestDistanceRMSE(t *testing.T) {
	t.Parallel()
	// truth (0, 1, 2, 3), est (0, 1, 3, 4): pair distances (1, 2, 3, 1, 2, 1)
	// and (1, 3, 4, 2, 3, 1); Σd·d̂ = 28, Σd̂² = 40, s = 0.7, residual sum
	// Σd² − 28²/40 = 20 − 19.6 = 0.4, over the 6 pairs: √(1/15).
	a := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	b := mat.NewDense(4, 1, []float64{0, 1, 3, 4})
	if got, want := DistanceRMSE(a, b), math.Sqrt(1.0/15); !near(got, want) {
		t.Errorf("DistanceRMSE = %g, want %g", got, want)
	}
}

func TestProcrustes(t *testing.T) {
	t.Parallel()
	// truth (0, 1, 2), est (0, 1, 3): standardised (−1, 0, 1)/√2 and
	// (−4, −1, 5)/√42, inner product 9/√84, disparity 1 − 81/84.
	a := mat.NewDense(3, 1, []float64{0, 1, 2})
	b := mat.NewDense(3, 1, []float64{0, 1, 3})
	if got, want := Procrustes(a, b), 3.0/84; !near(got, want) {
		t.Errorf("Procrustes = %g, want %g", got, want)
	}
	// A 2-D embedding of 1-D data padded with a zero column is the same.
	b2 := mat.NewDense(3, 2, []float64{0, 0, 0, 1, 0, 3})
	if got, want := Procrustes(a, b2), 3.0/84; !near(got, want) {
		t.Errorf("padded: Procrustes = %g, want %g", got, want)
	}
}

func TestLOONNError(t *testing.T) {
	t.Parallel()
	// Nearest neighbours 0→1, 1→0, 2→1, 3→2; only point 2 has another label.
	if got := LOONNError(line, []int{0, 0, 1, 1}); !near(got, 0.25) {
		t.Errorf("LOONNError = %g, want 1/4", got)
	}
}

// TestMetricsSmallN: the smallest inputs each metric defines, worked by
// hand, and the tie rule of LOONNError.
func TestMetricsSmallN(t *testing.T) {
	t.Parallel()
	// Three points, truth (0, 1, 3) and est (0, 3, 1): from each point the
	// one pair of others is ranked the other way round, τ = −1 at each.
	a := mat.NewDense(3, 1, []float64{0, 1, 3})
	b := mat.NewDense(3, 1, []float64{0, 3, 1})
	if got := MeanKendallTau(a, b); !near(got, -1) {
		t.Errorf("MeanKendallTau of 3 points = %g, want −1", got)
	}
	if got := MeanKendallTau(a.Slice(0, 2, 0, 1).(*mat.Dense), b.Slice(0, 2, 0, 1).(*mat.Dense)); !math.IsNaN(got) {
		t.Errorf("MeanKendallTau of 2 points = %g, want NaN (no pair to rank)", got)
	}
	// Two points: each one's single neighbour is the other, in any
	// embedding: precision 1.
	two, twoEst := mat.NewDense(2, 1, []float64{0, 1}), mat.NewDense(2, 1, []float64{0, 5})
	if got := KNNPrecision(two, twoEst, 0); got != 1 {
		t.Errorf("KNNPrecision of 2 points = %g, want 1", got)
	}
	// k above n − 1 is capped at n − 1 = 3: every other point is a
	// neighbour in both, precision 1.
	if got := KNNPrecision(line, shuffle, 10); got != 1 {
		t.Errorf("KNNPrecision with k = 10 > n − 1 = %g, want 1", got)
	}
	// Two points: one pair, the scale s = 1·5/25 = 0.2 fits it exactly.
	if got := DistanceRMSE(two, twoEst); got != 0 {
		t.Errorf("DistanceRMSE of 2 points = %g, want 0", got)
	}
	if got := DistanceRMSE(two.Slice(0, 1, 0, 1).(*mat.Dense), twoEst.Slice(0, 1, 0, 1).(*mat.Dense)); !math.IsNaN(got) {
		t.Errorf("DistanceRMSE of 1 point = %g, want NaN", got)
	}
	// An embedding with all points at one place: s = 0 (no scale makes it
	// fit), the residuals are the true distances of (0, 1, 3), (1, 3, 2):
	// √(14/3).
	if got := DistanceRMSE(a, mat.NewDense(3, 1, nil)); !near(got, math.Sqrt(14.0/3)) {
		t.Errorf("DistanceRMSE against coincident points = %g, want √(14/3)", got)
	}
	// LOONNError: two points with different labels are both wrong; with
	// (0, 1, 2) and labels (0, 0, 1) point 1 is as near to 0 as to 2, the
	// tie goes to the lower index (0, same label), point 2's nearest is 1
	// (another label): 1/3.
	if got := LOONNError(two, []int{0, 1}); got != 1 {
		t.Errorf("LOONNError of 2 points = %g, want 1", got)
	}
	if got := LOONNError(mat.NewDense(3, 1, []float64{0, 1, 2}), []int{0, 0, 1}); !near(got, 1.0/3) {
		t.Errorf("LOONNError with a tie = %g, want 1/3 (ties towards the lower index)", got)
	}
	if got := LOONNError(mat.NewDense(1, 1, nil), []int{0}); !math.IsNaN(got) {
		t.Errorf("LOONNError of 1 point = %g, want NaN", got)
	}
}
