package estimate

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
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

// TestRunEstimateDesign: a landmark study's estimate simulates its own
// design, not random questions: the result names the design and its
// landmarks, the crowd answers the design's questions until the design is
// covered and random fallback questions after (as the app serves them),
// and its learning curve, measured on those answers, is not the random
// study's. An active study's simulation runs the active design (a warm-up,
// no fallbacks); a design the estimate does not know is simulated as
// random questions, and the first landmark setting that cannot be built is
// the estimate's error.
func TestRunEstimateDesign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rnd := Assumptions{Items: 20, Design: "random", Questions: 50, Method: "ste", Dim: 2, Wrong: 0.1, Budget: 600, Seed: 7}
	rr, err := Run(ctx, rnd)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Design != "random" || rr.About != "random questions" || rr.Fallbacks != 0 {
		t.Errorf("random study: design %q (%s), %d fallbacks", rr.Design, rr.About, rr.Fallbacks)
	}
	lm := rnd
	lm.Design, lm.Config = "landmark-k1", DesignConfig{Landmarks: 5}
	rl, err := Run(ctx, lm)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := landmark.New(20, landmark.Config{Variant: landmark.K1, NumLandmarks: 5, Repeats: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rl.Design != "landmark-k1" || !strings.Contains(rl.About, "5 landmarks") {
		t.Errorf("landmark study: design %q (%s)", rl.Design, rl.About)
	}
	if rl.Fallbacks != lm.Budget-ld.Size() {
		t.Errorf("landmark study: %d fallback answers of %d; want %d after the design's %d answers", rl.Fallbacks, lm.Budget, lm.Budget-ld.Size(), ld.Size())
	}
	if len(rl.Points) != len(rr.Points) || rl.Points[0].Answers != rr.Points[0].Answers || rl.Points[0].Answers > ld.Size() {
		t.Fatalf("points %v and %v: want the same sizes, the first within the design's %d answers", rl.Points, rr.Points, ld.Size())
	}
	if slices.Equal(rl.Points, rr.Points) {
		t.Error("the landmark study's learning curve is the random study's")
	}

	ac := rnd
	ac.Design = "active"
	ra, err := Run(ctx, ac)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Design != "active" || !strings.Contains(ra.About, "warm-up 200 answers") || ra.Fallbacks != 0 {
		t.Errorf("active study: design %q (%s), %d fallbacks", ra.Design, ra.About, ra.Fallbacks)
	}

	other := rnd
	other.Design = "something-else"
	ro, err := Run(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Design != "random" || !slices.Equal(ro.Points, rr.Points) {
		t.Errorf("an unknown design: simulated %q, points %v; want random questions %v", ro.Design, ro.Points, rr.Points)
	}
	bad := lm
	bad.Config = DesignConfig{LandmarkItems: []int{0, 20}}
	if _, err := Run(ctx, bad); err == nil || !strings.Contains(err.Error(), "landmark-k1") {
		t.Errorf("landmark 20 of 20 items: error %v", err)
	}
}

// BenchmarkRunAtCap is an estimate at the cost caps (MaxItems items,
// MaxBudget answers) for each design the study page can ask for:
// go test ./internal/estimate -run '^$' -bench RunAtCap -benchtime 1x
func BenchmarkRunAtCap(b *testing.B) {
	for _, d := range Designs {
		b.Run(d, func(b *testing.B) {
			a := Assumptions{Items: MaxItems, Design: d, Questions: 50, Method: "tste", Dim: 2, Wrong: 0.1, Budget: MaxBudget, Seed: 1,
				Config: DesignConfig{Landmarks: 15}}
			for b.Loop() {
				if _, err := Run(context.Background(), a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
