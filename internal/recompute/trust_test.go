package recompute_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// lineCSV is a triplet CSV of n items on a line (1-D truth) answered by
// triplet.Oracle with 5% wrong answers: m random questions from p
// participants.
func lineCSV(n, m, p int, seed uint64) []byte {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, n, 1, 1)
	o := triplet.NewOracle(x, 0.05, seed+1)
	var b bytes.Buffer
	b.WriteString("anchor,closer,farther,participant,response_ms\n")
	for i := range m {
		a, j, k := triplet.RandomQuestion(rng, n)
		t := o.Answer(a, j, k)
		fmt.Fprintf(&b, "%d,%d,%d,p%03d,%d\n", t.Anchor, t.Closer, t.Farther, i%p, 800+rng.IntN(2000))
	}
	return b.Bytes()
}

// TestRunStoresTrust runs a recompute in PostgreSQL of a study whose
// answers have a known dimension (30 items on a line, 3,000 answers of 30
// participants, 5% wrong) with small trust settings, and checks what the
// store returns: the dimension choice suggests 1 (dimension's reproduction
// recovers 1-D in 10 of 10 seeds, docs/reproductions.md) while the
// embedding stays at its pinned 2-D, every item has a spread and a
// neighbour stability from 20 replicates that resampled participants, and
// the projection names a positive number of more answers and an error at
// twice the answers no higher than now. With the trust parts off, a run
// stores none.
func TestRunStoresTrust(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "line", lineCSV(30, 3000, 30, 7))
	rs := study.DefaultRecomputeSettings()
	rs.Trust = study.TrustSettings{MaxDim: 3, Folds: 5, Bootstrap: 20, Project: true}
	if err := store.SetRecomputeSettings(ctx, st.ID, rs); err != nil {
		t.Fatal(err)
	}
	if got, err := store.RecomputeSettings(ctx, st.ID); err != nil || got.Trust != rs.Trust {
		t.Fatalf("settings read back %+v, %v; stored %+v", got.Trust, err, rs.Trust)
	}
	runID, err := recompute.Run(ctx, store, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := store.RunTrust(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if tr == nil || tr.Dimensions == nil || tr.Uncertainty == nil || tr.Projection == nil {
		t.Fatalf("stored trust: %+v", tr)
	}
	if d := tr.Dimensions; d.Suggested != 1 || d.Fitted != 2 || len(d.Rows) != 3 {
		t.Errorf("dimension choice: suggested %d, fitted %d, %d rows", d.Suggested, d.Fitted, len(d.Rows))
	}
	u := tr.Uncertainty
	if u.Reps != 20 || u.Resampled != "participants" || len(u.Spread) != 30 || len(u.Stability) != 30 || len(u.NeighbourFreq) != 30 {
		t.Fatalf("uncertainty: %d reps of %s, %d spreads", u.Reps, u.Resampled, len(u.Spread))
	}
	for i, sp := range u.Spread {
		if !(sp > 0 && sp < 1) || u.Stability[i] < 0 || u.Stability[i] > 1 {
			t.Errorf("item %d: spread %.4f (unit RMS radius), stability %.3f", i, sp, u.Stability[i])
		}
	}
	if u.ErrorLow == nil || u.ErrorHigh == nil || *u.ErrorLow > *u.ErrorHigh {
		t.Errorf("error interval [%v, %v]", u.ErrorLow, u.ErrorHigh)
	}
	p := tr.Projection
	if p.Answers != 3000 || p.More.Value == nil || !(*p.More.Value > 0) || p.Twice.Value == nil || *p.Twice.Value > p.Now+1e-12 {
		t.Errorf("projection: %d answers, more %v, twice %v, now %.4f", p.Answers, p.More.Value, p.Twice.Value, p.Now)
	}

	// Not due again with the same answers (recompute.TrustGrowth): the next
	// run computes none, and the last stays the study's latest.
	again, err := recompute.Run(ctx, store, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := store.RunTrust(ctx, again); err != nil || tr != nil {
		t.Errorf("a run right after, with the same answers: stored %+v, %v; want none (not due)", tr, err)
	}
	if last, answers, _, tr, err := store.LatestTrust(ctx, st.ID); err != nil || last != runID || answers != 3000 || tr == nil {
		t.Errorf("latest trust: run %d of %d answers (%v), want run %d of 3000", last, answers, err, runID)
	}

	rs.Trust = study.TrustSettings{Folds: 5}
	if err := store.SetRecomputeSettings(ctx, st.ID, rs); err != nil {
		t.Fatal(err)
	}
	off, err := recompute.Run(ctx, store, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := store.RunTrust(ctx, off); err != nil || tr != nil {
		t.Errorf("trust off: stored %+v, %v", tr, err)
	}
}

// When a run computes the trust parts: the first time, once the answers
// grew by TrustGrowth and the last is TrustMinAge old, once it is
// TrustMaxAge old.
func TestTrustDue(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	last := &analysis.Trust{}
	for _, c := range []struct {
		last    *analysis.Trust
		answers int
		now     time.Time
		want    bool
	}{
		{nil, 1000, at, true},
		{last, 1000, at.Add(time.Minute), false},
		{last, 1249, at.Add(59 * time.Minute), false},
		{last, 1250, at.Add(time.Minute), false}, // grown, but within TrustMinAge
		{last, 1250, at.Add(10 * time.Minute), true},
		{last, 1249, at.Add(10 * time.Minute), false},
		{last, 1000, at.Add(time.Hour), true},
	} {
		if got := recompute.TrustDue(c.last, 1000, at, c.answers, c.now); got != c.want {
			t.Errorf("last %v, %d answers after 1,000, %v later: due %v, want %v", c.last != nil, c.answers, c.now.Sub(at), got, c.want)
		}
	}
}
