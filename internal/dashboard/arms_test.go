package dashboard

import (
	"math"
	"reflect"
	"testing"
)

// ArmCurves sorts each arm's points by answers, keeps the latest run's of
// points at the same answers and leaves out points without held-out
// answers; Compare reads the arms' errors at the most answers all of them
// reached, interpolating between points (worked out by hand below).
func TestArmCurvesAndCompare(t *testing.T) {
	t.Parallel()
	points := []ArmPoint{
		{Run: 1, Arm: 0, Answers: 100, Heldout: 20, Wrong: 8},
		{Run: 1, Arm: 1, Answers: 120, Heldout: 20, Wrong: 10},
		{Run: 2, Arm: 0, Answers: 300, Heldout: 40, Wrong: 8},
		{Run: 2, Arm: 1, Answers: 260, Heldout: 40, Wrong: 14},
		{Run: 3, Arm: 1, Answers: 260, Heldout: 50, Wrong: 15}, // no new answers of arm 1: replaces run 2's
		{Run: 3, Arm: 0, Answers: 500, Heldout: 50, Wrong: 5},
		{Run: 0, Arm: 2, Answers: 10, Heldout: 0}, // no held-out answers: no point
		{Run: 4, Arm: 7, Answers: 10, Heldout: 5}, // an arm the study does not have
	}
	curves := ArmCurves(points, 3)
	want := []ArmCurve{
		{Arm: 0, Answers: []int{100, 300, 500}, Error: []float64{0.4, 0.2, 0.1}, Heldout: []int{20, 40, 50}},
		{Arm: 1, Answers: []int{120, 260}, Error: []float64{0.5, 0.3}, Heldout: []int{20, 50}},
		{Arm: 2},
	}
	if !reflect.DeepEqual(curves, want) {
		t.Fatalf("curves %+v\nwant %+v", curves, want)
	}
	// At 260 answers (arm 1's last): arm 0 between 100 (0.4) and 300
	// (0.2), 0.4 − 0.2·160/200 = 0.24; arm 1 0.3; the SE at the mean
	// 0.27 on 50 held-out answers, √(0.27·0.73/50).
	c := Compare(curves)
	if c.Answers != 260 || c.Heldout != 50 || math.Abs(c.Error[0]-0.24) > 1e-12 || c.Error[1] != 0.3 || !math.IsNaN(c.Error[2]) ||
		math.Abs(c.SE-math.Sqrt(0.27*0.73/50)) > 1e-12 {
		t.Fatalf("compare %+v", c)
	}
	// One arm with a curve: nothing to compare.
	if c := Compare(curves[:1]); c.Answers != 0 || len(c.Error) != 1 || !math.IsNaN(c.Error[0]) {
		t.Fatalf("one curve: %+v", c)
	}
	// An arm whose first point lies beyond the common answers: NaN there.
	c = Compare([]ArmCurve{{Answers: []int{50}, Error: []float64{0.3}, Heldout: []int{10}}, want[0]})
	if c.Answers != 50 || c.Error[0] != 0.3 || !math.IsNaN(c.Error[1]) {
		t.Fatalf("compare %+v", c)
	}
}
