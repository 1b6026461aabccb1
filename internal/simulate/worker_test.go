package simulate

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestWorkerRefreshesActive runs the active design with a worker: the
// first fit comes as soon as the warm-up is over, then one every Every
// answers (between rounds of 3 annotators), each on every answer so far,
// warm-started from the previous fit; the pool questions are what the
// annotators answer after the warm-up.
func TestWorkerRefreshesActive(t *testing.T) {
	t.Parallel()
	const n, budget, every = 30, 600, 60
	o := points(n, 2, 4)
	d, err := active.New(n, active.Config{Seed: 1, WarmupPerItem: 5, Pool: every})
	if err != nil {
		t.Fatal(err)
	}
	var fitsAt []int
	var prevs []*mat.Dense
	w := &Worker{Every: every, Fit: func(ctx context.Context, ts []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error) {
		fitsAt = append(fitsAt, len(ts))
		prevs = append(prevs, prev)
		res, err := embed.Fit(ctx, n, ts, embed.Options{Method: embed.TSTE, Dim: 2, Seed: 1, Init: prev, MaxIter: 100})
		if err != nil {
			return nil, err
		}
		return res.X, nil
	}}
	var cp Checkpoint
	st, err := RunWithWorker(context.Background(), d, Crowd{Oracle: o, Annotators: 3, Seed: 2}, w, budget, nil, func(c Checkpoint) error { cp = c; return nil })
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up 150 answers; rounds of 3 make every fit land on a multiple of 3.
	want := []int{150, 210, 270, 330, 390, 450, 510, 570}
	if len(fitsAt) != len(want) || st.Fits != len(want) || d.Refreshes() != len(want) {
		t.Fatalf("fits after %v answers (stats %d, refreshes %d), want %v", fitsAt, st.Fits, d.Refreshes(), want)
	}
	for i := range want {
		if fitsAt[i] != want[i] {
			t.Errorf("fit %d after %d answers, want %d", i, fitsAt[i], want[i])
		}
		if (prevs[i] == nil) != (i == 0) {
			t.Errorf("fit %d: warm start given %v", i, prevs[i] != nil)
		}
	}
	if st.Fallbacks != 0 || st.Refused != 0 {
		t.Errorf("stats %+v: the active design always has questions open", st)
	}
	if len(cp.Triplets) != budget {
		t.Errorf("%d answers collected, want %d", len(cp.Triplets), budget)
	}
	// The pool of the last refresh (after 570 answers) took the 30 answers since.
	if d.PoolLeft() != every-(budget-570) {
		t.Errorf("last pool wants %d more answers, want %d", d.PoolLeft(), every-(budget-570))
	}
	// A worker without a fit is refused.
	d2, _ := active.New(n, active.Config{})
	if _, err := RunWithWorker(context.Background(), d2, Crowd{Oracle: o, Annotators: 1}, &Worker{Every: 0}, 10, nil, func(Checkpoint) error { return nil }); err == nil {
		t.Error("a worker refitting every 0 answers was accepted")
	}
}
