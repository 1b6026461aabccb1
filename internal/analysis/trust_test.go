package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestRecomputeTrust runs a recompute with every trust part on simulated
// answers of known dimension: 40 items on a line (1-D truth), 4,000 random
// questions answered by triplet.Oracle with 5% wrong answers, 40
// participants of 100 answers. The embedding stays pinned at 2-D; the
// dimension choice must suggest 1 (dimension's reproduction recovers 1-D in
// 10 of 10 seeds at 8,000 answers, docs/reproductions.md), the bootstrap
// must give every item a spread and a neighbour stability in [0, 1] and an
// error interval around the held-out error, and the projection an error at
// twice the answers no higher than the curve's error now.
func TestRecomputeTrust(t *testing.T) {
	t.Parallel()
	const n, m = 40, 4000
	rng := triplet.NewRand(28)
	x := triplet.Gaussian(rng, n, 1, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.05, 29), m)
	groups := make([]int, m)
	for i := range groups {
		groups[i] = i / 100
	}
	s := Settings{Seed: 1, Dim: 2, Trust: TrustSettings{MaxDim: 3, Folds: 5, Bootstrap: 20, Projection: true}}
	stages := map[string]bool{}
	res, err := Recompute(context.Background(), Input{N: n, Triplets: ts, Groups: groups}, s, func(i int) { stages[Stages[i]] = true })
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Stages {
		if !stages[st] {
			t.Errorf("stage %q not reported", st)
		}
	}
	tr := res.Trust
	if tr == nil || tr.Dimensions == nil || tr.Uncertainty == nil || tr.Projection == nil {
		t.Fatalf("trust parts missing: %+v", tr)
	}
	d := tr.Dimensions
	if d.Suggested != 1 || d.Fitted != 2 || len(d.Rows) != 3 || d.Folds != 5 {
		t.Errorf("dimension choice: suggested %d, fitted %d, %d rows, %d folds; want 1, 2, 3, 5", d.Suggested, d.Fitted, len(d.Rows), d.Folds)
	}
	for _, r := range d.Rows {
		if r.SE == nil || !(*r.SE > 0) || r.Mean < 0.02 || r.Mean > 0.2 {
			t.Errorf("d = %d: held-out %.4f ± %v (5%% wrong answers: about 0.05)", r.Dim, r.Mean, r.SE)
		}
	}
	u := tr.Uncertainty
	if u.Reps != 20 || u.Resampled != "participants" || len(u.Spread) != n || len(u.Stability) != n || len(u.Cov) != n {
		t.Fatalf("uncertainty: %d reps of %s, %d spreads, %d stabilities, %d covariances", u.Reps, u.Resampled, len(u.Spread), len(u.Stability), len(u.Cov))
	}
	for i := range n {
		if !(u.Spread[i] > 0) || u.Spread[i] > 1 || u.Stability[i] < 0 || u.Stability[i] > 1 || u.Cov[i][0] < 0 || u.Cov[i][2] < 0 {
			t.Errorf("item %d: spread %.4f, stability %.3f, cov %v", i, u.Spread[i], u.Stability[i], u.Cov[i])
		}
	}
	if u.HeldoutError == nil || u.ErrorLow == nil || u.ErrorHigh == nil ||
		!(*u.ErrorLow <= *u.HeldoutError && *u.HeldoutError <= *u.ErrorHigh) || math.Abs(*u.HeldoutError-res.HeldoutError) > 1e-12 {
		t.Errorf("held-out error %v [%v, %v], the run's %.4f", u.HeldoutError, u.ErrorLow, u.ErrorHigh, res.HeldoutError)
	}
	p := tr.Projection
	if len(p.Points) < 4 || p.Train != res.Train || p.Answers != m || !p.TargetAuto || !(p.Target < p.Now) {
		t.Errorf("projection: %d points, train %d (run %d), answers %d, target %.4f (auto %v) from %.4f", len(p.Points), p.Train, res.Train, p.Answers, p.Target, p.TargetAuto, p.Now)
	}
	if p.Twice.Value == nil || *p.Twice.Value > p.Now+1e-12 || p.Twice.Low == nil || p.Twice.High == nil || *p.Twice.Low > *p.Twice.High {
		t.Errorf("error at twice the answers %+v, now %.4f", p.Twice, p.Now)
	}
	if p.More.Value == nil || !(*p.More.Value > 0) {
		t.Errorf("more answers for %.4f: %v", p.Target, p.More.Value)
	}
}

// TestRecomputeTrustTooFew: below minTrustAnswers the parts are left out
// with a note, and the run still succeeds.
func TestRecomputeTrustTooFew(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(3)
	x := triplet.Gaussian(rng, 10, 2, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, 4), 60)
	res, err := Recompute(context.Background(), Input{N: 10, Triplets: ts}, Settings{Seed: 1, Trust: TrustSettings{MaxDim: 3, Bootstrap: 10, Projection: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trust == nil || res.Trust.Dimensions != nil || res.Trust.Uncertainty != nil || res.Trust.Projection != nil || len(res.Trust.Notes) != 1 {
		t.Errorf("trust on 60 answers: %+v", res.Trust)
	}
}

// TestSubset: a cap keeps that many answers in their order with their
// groups, the same for the same seed; no cap or a cap above the count
// keeps them all.
func TestSubset(t *testing.T) {
	t.Parallel()
	ts := make([]triplet.Triplet, 100)
	g := make([]int, 100)
	for i := range ts {
		ts[i] = triplet.Triplet{Anchor: i, Closer: i + 1, Farther: i + 2}
		g[i] = 1000 + i
	}
	a, ga := subset(ts, g, 30, 7)
	b, _ := subset(ts, g, 30, 7)
	if len(a) != 30 || len(ga) != 30 {
		t.Fatalf("%d answers, %d groups kept, want 30", len(a), len(ga))
	}
	for i := range a {
		if a[i] != b[i] || ga[i] != 1000+a[i].Anchor || i > 0 && a[i].Anchor <= a[i-1].Anchor {
			t.Fatalf("answer %d: %v (group %d), again %v: not the same seeded subset in order", i, a[i], ga[i], b[i])
		}
	}
	if all, _ := subset(ts, g, 0, 7); len(all) != 100 {
		t.Errorf("no cap kept %d", len(all))
	}
	if all, _ := subset(ts, nil, 200, 7); len(all) != 100 {
		t.Errorf("a cap above the count kept %d", len(all))
	}
}
