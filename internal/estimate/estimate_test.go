package estimate

import (
	"context"
	"math"
	"reflect"
	"testing"
)

// TestRunEstimate: the estimate of a simulated study with 10% wrong
// answers levels off near that share (its held-out answers are as noisy
// as the crowd: the floor is at least about 10%), projects a finite number
// of answers for its automatic target inside the interval it gives, asks
// more answers of a study with more items, and is the same for the same
// seed.
func TestRunEstimate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	small := Assumptions{Items: 20, Design: "random", Questions: 50, Method: "ste", Dim: 2, Wrong: 0.1, Seed: 7}
	r, err := Run(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if r.Budget != DefaultBudget(20, 2) || len(r.Points) < 4 {
		t.Fatalf("budget %d, %d points", r.Budget, len(r.Points))
	}
	if !(r.A > 0.06 && r.A < 0.2) || !r.TargetAuto || math.Abs(r.Target-(r.A+TargetGap)) > 1e-12 {
		t.Errorf("floor %g, target %g (auto %v): want a floor near the 10%% wrong answers", r.A, r.Target, r.TargetAuto)
	}
	if r.Answers == nil || r.Low == nil || !(*r.Answers > 0) || *r.Low > *r.Answers || (r.High != nil && *r.High < *r.Answers) {
		t.Fatalf("answers %v [%v, %v]", r.Answers, r.Low, r.High)
	}
	again, err := Run(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, again) {
		t.Error("the same seed gave another estimate")
	}
	big := small
	big.Items = 60
	rb, err := Run(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Answers == nil || !(*rb.Answers > *r.Answers) {
		t.Errorf("60 items need %v answers, 20 items %g: want more", rb.Answers, *r.Answers)
	}
	for _, bad := range []Assumptions{{Items: 2, Dim: 2}, {Items: MaxItems + 1, Dim: 2}, {Items: 10, Dim: 0}, {Items: 10, Dim: 2, Wrong: 0.5}} {
		if _, err := Run(ctx, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
