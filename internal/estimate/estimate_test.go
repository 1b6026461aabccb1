package estimate

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/projection"
	"github.com/closer-lab/closer/internal/simulate"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
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
// MaxBudget triplets) for each design the study page can ask for, for
// each format (random trials, the triplets fitted at the cap), and for
// MaxArms arms, two of each design and the active ones twice:
// go test ./internal/estimate -run '^$' -bench RunAtCap -benchtime 1x
func BenchmarkRunAtCap(b *testing.B) {
	base := Assumptions{Items: MaxItems, Design: "random", Questions: 50, Method: "tste", Dim: 2, Wrong: 0.1, Budget: MaxBudget, Seed: 1,
		Config: DesignConfig{Landmarks: 15}}
	cases := map[string]Assumptions{}
	for _, d := range Designs {
		a := base
		a.Design = d
		cases[d] = a
	}
	for _, f := range []string{"odd-one-out", "rank:8:2"} {
		a := base
		a.Format, a.Budget = f, 0
		cases[f] = a
	}
	arms := base
	arms.HeldoutShare = 0.1
	for i := range MaxArms {
		d := []string{"active", "landmark-k1", "active", "basis", "random", "landmark-k2", "active", "random"}[i]
		arms.Arms = append(arms.Arms, Arm{Name: fmt.Sprintf("arm%d", i), Design: d, Config: DesignConfig{Landmarks: 15}, Share: 1.0 / MaxArms})
	}
	cases["arms-8"] = arms
	for _, name := range append(slices.Clone(Designs), "odd-one-out", "rank:8:2", "arms-8") {
		a := cases[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(context.Background(), a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSimulateRunsTheStudysArms: the estimate simulates the study as it
// runs, not its first design alone: each arm's design at its share, the
// participants answering in blocks of the study's questions per
// participant, a share of each block held out. Its answers are exactly
// those of simulate.RunArms built by hand on the same seeds (one
// participant at a time, the designs built by simulate.BuildDesign), in
// the order they came; and they change with the questions per
// participant (the arm of each block) and with the held-out share.
func TestSimulateRunsTheStudysArms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := Assumptions{Items: 20, Design: "random", Questions: 7, Method: "ste", Dim: 2, Wrong: 0.1, Budget: 500, Seed: 11, HeldoutShare: 0.1,
		Arms: []Arm{{Name: "plain", Design: "random", Share: 0.5}, {Name: "marks", Design: "landmark-k1", Config: DesignConfig{Landmarks: 4}, Share: 0.3},
			{Name: "more", Design: "random", Share: 0.2}}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	sim, err := Simulate(ctx, a)
	if err != nil {
		t.Fatal(err)
	}

	// By hand: the same points, crowd, designs and seeds.
	x := triplet.Gaussian(triplet.NewRand(triplet.Mix64(a.Seed^1)), a.Items, a.Dim, 1)
	var arms []simulate.Arm
	for i, arm := range a.Arms {
		sp := simulate.DesignSpec{Design: arm.Design, N: a.Items, Dim: a.Dim, Repeats: 1, NumLandmarks: arm.Config.Landmarks}
		b, err := simulate.BuildDesign(sp, simulate.Estimator{}, triplet.Mix64((a.Seed^5)+uint64(i)), triplet.Mix64((a.Seed^6)+uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		arms = append(arms, simulate.Arm{Name: arm.Name, Share: arm.Share, Design: b.Design})
	}
	crowd := simulate.Crowd{Oracle: triplet.NewOracle(x, a.Wrong, triplet.Mix64(a.Seed^2)), Annotators: 1, Seed: triplet.Mix64(a.Seed ^ 3)}
	var want []triplet.Triplet
	var order []int
	var heldout int
	var perArm []int
	_, err = simulate.RunArms(ctx, arms, crowd, simulate.Study{PerAnnotator: 7, HeldoutShare: 0.1}, a.Budget, nil, func(cp simulate.StudyCheckpoint) error {
		order, heldout = slices.Clone(cp.Order), len(cp.Heldout)
		next := make([]int, len(cp.Arms))
		for _, i := range cp.Order {
			want = append(want, cp.Arms[i].Triplets[next[i]])
			next[i]++
		}
		for _, ac := range cp.Arms {
			perArm = append(perArm, ac.Annotators)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sim.Triplets, want) || !slices.Equal(sim.Arm, order) || sim.Heldout != heldout || sim.PerAnswer != 1 {
		t.Fatalf("the estimate's simulation differs from simulate.RunArms by hand: %d/%d answers, %d/%d held out", len(sim.Triplets), len(want), sim.Heldout, heldout)
	}
	if heldout == 0 || len(want)+heldout != a.Budget {
		t.Errorf("%d answers fitted and %d held out of %d", len(want), heldout, a.Budget)
	}
	// Participants answer in blocks: the first participant's 7 questions
	// (less the held-out ones) are all in one arm, and every arm has
	// participants near its share.
	first := 7 - heldoutIn(a, 0, 7)
	for _, arm := range sim.Arm[:first] {
		if arm != sim.Arm[0] {
			t.Fatalf("the first participant's answers went to arms %v", sim.Arm[:first])
		}
	}
	for i, arm := range sim.Arms {
		if arm.Participants != perArm[i] || arm.Name != a.Arms[i].Name || arm.Simulated != countOf(sim.Arm, i) {
			t.Errorf("arm %d: %+v, by hand %d participants", i, arm, perArm[i])
		}
		if share := float64(arm.Participants) / float64(sim.Participants); math.Abs(share-a.Arms[i].Share) > 1.5/float64(sim.Participants) {
			t.Errorf("arm %s: %.3f of the participants, its share %.2f", arm.Name, share, a.Arms[i].Share)
		}
	}
	if sim.Arms[1].Design != "landmark-k1" || !strings.Contains(sim.Arms[1].About, "4 landmarks") {
		t.Errorf("arm marks: %s (%s)", sim.Arms[1].Design, sim.Arms[1].About)
	}

	// Other questions per participant, or no held-out share: other answers.
	for _, change := range []func(*Assumptions){
		func(b *Assumptions) { b.Questions = 40 },
		func(b *Assumptions) { b.HeldoutShare = 0 },
	} {
		b := a
		change(&b)
		other, err := Simulate(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(other.Arm, sim.Arm) {
			t.Errorf("%d questions per participant, held-out share %g: the same arms as %d and %g", b.Questions, b.HeldoutShare, a.Questions, a.HeldoutShare)
		}
	}
}

// heldoutIn counts the held-out questions among participant p's first
// k, as the simulation decides them (the crowd's seed).
func heldoutIn(a Assumptions, p, k int) int {
	n := 0
	for pos := range k {
		if design.HeldOut(a.HeldoutShare, triplet.Mix64(a.Seed^3), uint64(p), pos) {
			n++
		}
	}
	return n
}

// TestSimulateFormats: an odd-one-out or rank study's estimate asks its
// format's trials, answered by simulate.TrialOracle's choice rules, and
// fits their derived triplets, exactly as simulate.RunTrialArms on the
// same seeds with the study's arms, questions per participant and
// held-out share; a format's study with a design other than random (which
// the app refuses) is refused too.
func TestSimulateFormats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		format string
		per    int
	}{{"odd-one-out", 2}, {"rank:4:2", 5}} {
		a := Assumptions{Items: 20, Design: "random", Questions: 9, Method: "ste", Dim: 2, Wrong: 0.1, Budget: 300, Seed: 5, HeldoutShare: 0.2,
			Format: c.format, Arms: []Arm{{Name: "a", Design: "random", Share: 0.6}, {Name: "b", Design: "random", Share: 0.4}}}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		sim, err := Simulate(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		x := triplet.Gaussian(triplet.NewRand(triplet.Mix64(a.Seed^1)), a.Items, a.Dim, 1)
		r := simulate.TrialArmsRun{Oracle: simulate.NewTrialOracle(x, a.Wrong, triplet.Mix64(a.Seed^2)), Shares: []float64{0.6, 0.4},
			Study: simulate.Study{PerAnnotator: 9, HeldoutShare: 0.2}, Seed: triplet.Mix64(a.Seed ^ 3)}
		if c.format == "odd-one-out" {
			r.Format = trial.FormatOddOneOut
		} else {
			r.Format, r.Rank = trial.FormatRank, trial.RankSpec{N: 4, K: 2}
		}
		want, err := simulate.RunTrialArms(ctx, r, a.Budget)
		if err != nil {
			t.Fatal(err)
		}
		if sim.Format != c.format || sim.PerAnswer != c.per || !slices.Equal(sim.Triplets, want.Trials.Triplets()) || !slices.Equal(sim.Arm, want.Arm) ||
			sim.Heldout != want.Heldout || len(sim.Triplets) != c.per*len(sim.Arm) || want.Trials.Len() != len(sim.Arm) {
			t.Errorf("%s: the estimate's simulation (%s, %d triplets an answer, %d answers) differs from simulate.RunTrialArms (%d trials)",
				c.format, sim.Format, sim.PerAnswer, len(sim.Arm), want.Trials.Len())
		}
		bad := a
		bad.Arms = nil
		bad.Design = "active"
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "triplets only") {
			t.Errorf("%s with the active design: %v", c.format, err)
		}
	}
}

// TestRunEstimateFormatAndArms: Run reports what it simulated (the
// format, the triplets an answer implies, the participants and the
// held-out answers), its default budget in a format's answers keeps the
// triplets fitted within the caps, and a study with arms gets each arm's
// own curve, read off at the study's target.
func TestRunEstimateFormatAndArms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	odd := Assumptions{Items: 20, Design: "random", Questions: 30, Method: "ste", Dim: 2, Wrong: 0.1, Seed: 7, Format: "odd-one-out"}
	ro, err := Run(ctx, odd)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Format != "odd-one-out" || ro.PerAnswer != 2 || ro.Budget != FormatBudget(20, 2, 2) || ro.Participants != (ro.Budget+29)/30 || len(ro.Arms) != 0 {
		t.Errorf("odd-one-out: format %q, %d an answer, %d answers, %d participants, %d arms", ro.Format, ro.PerAnswer, ro.Budget, ro.Participants, len(ro.Arms))
	}
	tri := odd
	tri.Format = ""
	rt, err := Run(ctx, tri)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(rt.Points, ro.Points) || rt.PerAnswer != 1 || rt.Format != "triplet" {
		t.Errorf("the triplet study's curve is the odd-one-out study's")
	}

	arms := Assumptions{Items: 20, Design: "random", Questions: 20, Method: "ste", Dim: 2, Wrong: 0.1, Budget: 1200, Seed: 7, HeldoutShare: 0.1, Target: 0.2,
		Arms: []Arm{{Name: "plain", Design: "random", Share: 0.5}, {Name: "marks", Design: "landmark-k1", Config: DesignConfig{Landmarks: 5}, Share: 0.5}}}
	ra, err := Run(ctx, arms)
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.Arms) != 2 || ra.Heldout == 0 || ra.Target != 0.2 {
		t.Fatalf("arms: %d arm results, %d held out, target %g", len(ra.Arms), ra.Heldout, ra.Target)
	}
	total, fallbacks := 0, 0
	for _, arm := range ra.Arms {
		total, fallbacks = total+arm.Simulated, fallbacks+arm.Fallbacks
		if arm.Error != "" || len(arm.Points) < projection.MinPoints || arm.Answers == nil {
			t.Errorf("arm %s: %d points, answers %v, error %q", arm.Name, len(arm.Points), arm.Answers, arm.Error)
		}
	}
	if total+ra.Heldout != ra.Budget || ra.Arms[1].Design != "landmark-k1" || ra.Design != "random" || ra.Fallbacks != fallbacks {
		t.Errorf("arms: %d + %d held out of %d answers; designs %s, %s; %d fallbacks", total, ra.Heldout, ra.Budget, ra.Design, ra.Arms[1].Design, ra.Fallbacks)
	}
}
