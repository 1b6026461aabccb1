package simulate

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/triplet"
)

func points(n, d int, seed uint64) *triplet.Oracle {
	return triplet.NewOracle(triplet.Gaussian(triplet.NewRand(seed), n, d, 1), 0, seed+1)
}

// TestLandmarkRunCoversDesign runs a landmark design with repeats through a
// crowd of 7 annotators past its size: every comparison is answered exactly
// repeats times, none is handed out more often, the design is done, and the
// answers beyond its size are fallbacks.
func TestLandmarkRunCoversDesign(t *testing.T) {
	t.Parallel()
	o := points(30, 3, 1)
	d, err := landmark.New(30, landmark.Config{Variant: landmark.K1, NumLandmarks: 4, Repeats: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	size := d.Size() // 2 · ((30−4)·6 + 4·3) = 336
	budget := size + 50
	var cpSeen []int
	st, err := Run(context.Background(), d, Crowd{Oracle: o, Annotators: 7, Seed: 3}, budget, []int{100, 336, 1000}, func(cp Checkpoint) error {
		cpSeen = append(cpSeen, cp.Answers)
		if len(cp.Triplets) != cp.Answers || len(cp.Fallback) != cp.Answers {
			t.Errorf("checkpoint %d has %d triplets", cp.Answers, len(cp.Triplets))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cpSeen, []int{100, 336, budget}) {
		t.Errorf("checkpoints at %v, want [100 336 %d]", cpSeen, budget)
	}
	if !d.Done() || st.Refused != 0 || st.MaxHanded != 2 {
		t.Errorf("done %v, stats %+v: want done, 0 refused, max handed 2", d.Done(), st)
	}
	if st.Answers != budget || st.Fallbacks < 50 {
		t.Errorf("stats %+v: want %d answers, at least 50 fallbacks", st, budget)
	}
	// Counting answers: design comparisons exactly twice among non-fallbacks.
	votes := map[triplet.Key]int{}
	var cp Checkpoint
	_, err = Run(context.Background(), mustNew(t), Crowd{Oracle: o, Annotators: 7, Seed: 3}, budget, nil, func(c Checkpoint) error { cp = c; return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range cp.DesignTriplets() {
		votes[triplet.KeyOf(tr)]++
	}
	if len(votes) != d.Comparisons() || len(cp.DesignTriplets()) != size {
		t.Errorf("%d distinct design comparisons answered (%d answers), want %d (%d)", len(votes), len(cp.DesignTriplets()), d.Comparisons(), size)
	}
	for k, c := range votes {
		if c != 2 {
			t.Fatalf("comparison %v answered %d times, want 2", k, c)
		}
	}
	// With an error-free oracle every answer is the truth.
	for _, tr := range cp.Triplets {
		if tr != triplet.Truth(o.X, tr.Anchor, tr.Closer, tr.Farther) {
			t.Fatalf("answer %v is not the truth", tr)
		}
	}
}

func mustNew(t *testing.T) *landmark.Design {
	d, err := landmark.New(30, landmark.Config{Variant: landmark.K1, NumLandmarks: 4, Repeats: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	run := func() []triplet.Triplet {
		o := triplet.NewOracle(triplet.UniformCube(triplet.NewRand(5), 40, 2), 0.2, 6)
		d, _ := landmark.New(40, landmark.Config{Variant: landmark.K2, NumLandmarks: 3, Seed: 7})
		var ts []triplet.Triplet
		if _, err := Run(context.Background(), d, Crowd{Oracle: o, Annotators: 5, Seed: 8}, 500, nil, func(cp Checkpoint) error {
			ts = slices.Clone(cp.Triplets)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ts
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Error("same seeds gave different runs")
	}
}

func TestRandomDesignHasNoFallbacks(t *testing.T) {
	t.Parallel()
	o := points(25, 2, 3)
	r, _ := landmark.NewRandom(25, 4)
	st, err := Run(context.Background(), r, Crowd{Oracle: o, Annotators: 10, Seed: 1}, 333, nil, func(Checkpoint) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Fallbacks != 0 || st.Answers != 333 || r.Answered() != 333 || st.Rounds != 34 {
		t.Errorf("stats %+v, design answered %d: want 333 answers in 34 rounds, no fallbacks", st, r.Answered())
	}
}

// chain is a design with one comparison open at a time, each depending on
// the answer before (the worst case for a crowd): (i; i+1, i+2) for i = 0..
// steps-1, one answer each.
type chain struct{ next, steps int }

func (c *chain) key() triplet.Key { return triplet.Key{Anchor: c.next, J: c.next + 1, K: c.next + 2} }
func (c *chain) Open(dst []design.Need, limit int) []design.Need {
	if c.Done() {
		return dst
	}
	return append(dst, design.Need{Key: c.key(), Answers: 1})
}
func (c *chain) Record(t triplet.Triplet) bool {
	if c.Done() || triplet.KeyOf(t) != c.key() {
		return false
	}
	c.next++
	return true
}
func (c *chain) Done() bool                    { return c.next >= c.steps }
func (c *chain) MarshalState() ([]byte, error) { return nil, nil }

// TestFallbackShare: with one open comparison per round and 5 annotators,
// 4 of every 5 answers are fallbacks until the chain is done, and all
// answers after that.
func TestFallbackShare(t *testing.T) {
	t.Parallel()
	o := points(20, 2, 9)
	c := &chain{steps: 10}
	var shares []float64
	st, err := Run(context.Background(), c, Crowd{Oracle: o, Annotators: 5, Seed: 2}, 100, Even(100, 4), func(cp Checkpoint) error {
		shares = append(shares, cp.FallbackShare())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Done() || st.Fallbacks != 90 || st.Refused != 0 || st.MaxHanded != 1 {
		t.Errorf("stats %+v, done %v: want 90 fallbacks", st, c.Done())
	}
	// After 25 answers (5 rounds): 5 design answers; after 50, 10; then none.
	want := []float64{20.0 / 25, 40.0 / 50, 65.0 / 75, 90.0 / 100}
	for i := range want {
		if d := shares[i] - want[i]; d > 1e-12 || d < -1e-12 {
			t.Errorf("fallback shares %v, want %v", shares, want)
			break
		}
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	o := points(10, 2, 1)
	r, _ := landmark.NewRandom(10, 1)
	noop := func(Checkpoint) error { return nil }
	if _, err := Run(context.Background(), r, Crowd{Oracle: o, Annotators: 0}, 10, nil, noop); err == nil {
		t.Error("0 annotators accepted")
	}
	if _, err := Run(context.Background(), r, Crowd{Oracle: o, Annotators: 1}, 0, nil, noop); err == nil {
		t.Error("budget 0 accepted")
	}
	stop := errors.New("stop")
	if _, err := Run(context.Background(), r, Crowd{Oracle: o, Annotators: 1}, 10, []int{3}, func(Checkpoint) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error not returned: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, r, Crowd{Oracle: o, Annotators: 1}, 10, nil, noop); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestEven(t *testing.T) {
	t.Parallel()
	if got := Even(1000, 4); !slices.Equal(got, []int{250, 500, 750, 1000}) {
		t.Errorf("Even(1000, 4) = %v", got)
	}
	if got := Even(3, 10); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("Even(3, 10) = %v", got)
	}
}
