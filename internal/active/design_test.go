package active

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// drive answers the design's first open question k times from the oracle,
// refreshing from a t-STE fit every `every` answers once warmed up, and
// returns the answers.
func drive(t *testing.T, d *Design, o *triplet.Oracle, answers []triplet.Triplet, k, every int, onOpen func(design.Need)) []triplet.Triplet {
	t.Helper()
	var open []design.Need
	for range k {
		if d.WarmedUp() && (d.Refreshes() == 0 || (d.Answered()-d.Warmup())%every == 0) {
			refresh(t, d, answers)
		}
		open = d.Open(open[:0], 1)
		if len(open) != 1 {
			t.Fatalf("Open gave %d questions, want 1", len(open))
		}
		if onOpen != nil {
			onOpen(open[0])
		}
		a := o.Answer(open[0].Key.Anchor, open[0].Key.J, open[0].Key.K)
		if !d.Record(a) {
			t.Fatalf("valid answer %v refused", a)
		}
		answers = append(answers, a)
	}
	return answers
}

func refresh(t *testing.T, d *Design, answers []triplet.Triplet) {
	t.Helper()
	res, err := embed.Fit(context.Background(), d.N(), answers, embed.Options{Method: embed.TSTE, Dim: 2, Seed: 1, MaxIter: 50})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Refresh(res.X, answers); err != nil {
		t.Fatal(err)
	}
}

func TestWarmupThenPool(t *testing.T) {
	t.Parallel()
	const n = 20
	x := triplet.Gaussian(triplet.NewRand(1), n, 2, 1)
	d, err := New(n, Config{Seed: 4, WarmupPerItem: 2, Pool: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d.Warmup() != 40 {
		t.Fatalf("warm-up %d answers, want R·n = 40", d.Warmup())
	}
	o := triplet.NewOracle(x, 0, 1)
	answers := drive(t, d, o, nil, 40, 1000, nil)
	if !d.WarmedUp() || d.Refreshes() != 0 {
		t.Fatalf("after 40 answers: warmed up %v, refreshes %d", d.WarmedUp(), d.Refreshes())
	}
	// Warmed up but not refreshed: random questions.
	if open := d.Open(nil, 3); len(open) != 3 {
		t.Fatalf("Open(3) before any refresh gave %d questions", len(open))
	}
	refresh(t, d, answers)
	pool := d.Pool(nil)
	if len(pool) != 10 {
		t.Fatalf("pool of %d questions, want 10", len(pool))
	}
	open := d.Open(nil, 12)
	for i, nd := range open[:10] {
		if nd.Key != pool[i].Key || nd.Answers != 1 {
			t.Errorf("open %d is %v×%d, want pool question %v×1", i, nd.Key, nd.Answers, pool[i].Key)
		}
	}
	if len(open) != 12 {
		t.Errorf("Open(12) with 10 in the pool gave %d questions, want 10 + 2 random", len(open))
	}
	// Answering a pool question takes it out of Open.
	first := pool[0].Key
	d.Record(o.Answer(first.Anchor, first.J, first.K))
	if got := d.Open(nil, 1); got[0].Key == first {
		t.Error("an answered pool question is still open")
	}
	if d.PoolLeft() != 9 {
		t.Errorf("pool wants %d more answers, want 9", d.PoolLeft())
	}
}

// TestRoundRobin checks that pool heads follow the round robin: each
// refresh covers the heads after the last one answered, so over a run
// every item is a head, again and again.
func TestRoundRobin(t *testing.T) {
	t.Parallel()
	const n = 15
	x := triplet.Gaussian(triplet.NewRand(2), n, 2, 1)
	d, err := New(n, Config{Seed: 1, WarmupPerItem: 2, Pool: 4})
	if err != nil {
		t.Fatal(err)
	}
	o := triplet.NewOracle(x, 0, 2)
	heads := map[int]int{}
	answers := drive(t, d, o, nil, d.Warmup(), 4, nil)
	var order []int
	drive(t, d, o, answers, 4*n, 4, func(nd design.Need) {
		heads[nd.Key.Anchor]++
		order = append(order, nd.Key.Anchor)
	})
	for h := range n {
		if heads[h] != 4 {
			t.Errorf("item %d was the head of %d pool questions in 4 rounds, want 4", h, heads[h])
		}
	}
	for i := 1; i < len(order); i++ {
		if order[i] != (order[i-1]+1)%n {
			t.Fatalf("heads in order %v: %d follows %d", order, order[i], order[i-1])
		}
	}
}

// TestPoolNeverRepeats checks that one refresh never hands the same
// comparison out more often than its repeats, however many annotators ask.
func TestPoolNeverRepeats(t *testing.T) {
	t.Parallel()
	const n = 30
	x := triplet.Gaussian(triplet.NewRand(3), n, 2, 1)
	for _, repeats := range []int{1, 3} {
		d, err := New(n, Config{Seed: 2, WarmupPerItem: 3, Pool: 60, Repeats: repeats})
		if err != nil {
			t.Fatal(err)
		}
		o := triplet.NewOracle(x, 0.1, 3)
		answers := drive(t, d, o, nil, d.Warmup(), 1, nil)
		refresh(t, d, answers)
		inPool := map[triplet.Key]bool{}
		for _, q := range d.Pool(nil) {
			if inPool[q.Key] {
				t.Fatalf("repeats %d: the pool holds %v twice", repeats, q.Key)
			}
			inPool[q.Key] = true
		}
		// Five annotators at a time take what is open, breadth first.
		handed := map[triplet.Key]int{}
		for d.PoolLeft() > 0 {
			var round []triplet.Key
			for _, nd := range d.Open(nil, 5) {
				for range min(nd.Answers, 5-len(round)) {
					round = append(round, nd.Key)
				}
			}
			for _, k := range round {
				if inPool[k] {
					handed[k]++
				}
				d.Record(o.Answer(k.Anchor, k.J, k.K))
			}
		}
		for k, c := range handed {
			if c != repeats {
				t.Errorf("repeats %d: pool question %v handed out %d times", repeats, k, c)
			}
		}
		if len(handed) != 60 {
			t.Errorf("repeats %d: %d pool questions answered, want 60", repeats, len(handed))
		}
	}
}

// TestStateRoundTrip saves the design mid-run and checks that the restored
// one behaves the same from there on.
func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	const n = 25
	x := triplet.Gaussian(triplet.NewRand(4), n, 2, 1)
	cfg := Config{Seed: 8, WarmupPerItem: 2, Pool: 30, Repeats: 2, Score: ScoreConfig{Model: CKL, Rule: Uncertainty, Candidates: 40}}
	d, err := New(n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := triplet.NewOracle(x, 0.1, 4)
	answers := drive(t, d, o, nil, d.Warmup()+17, 10, nil)
	data, err := d.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatalf("state changed in a round trip:\n%s\n%s", data, again)
	}
	if !slices.Equal(d.Open(nil, 40), r.Open(nil, 40)) || !slices.Equal(d.Heads(), r.Heads()) {
		t.Fatal("the restored design offers other questions")
	}
	// Both go on identically, refreshes included.
	o1, o2 := triplet.NewOracle(x, 0.1, 5), triplet.NewOracle(x, 0.1, 5)
	a1 := drive(t, d, o1, slices.Clone(answers), 40, 10, nil)
	a2 := drive(t, r, o2, slices.Clone(answers), 40, 10, nil)
	if !slices.Equal(a1, a2) {
		t.Error("the restored design asked other questions")
	}
	s1, _ := d.MarshalState()
	s2, _ := r.MarshalState()
	if !bytes.Equal(s1, s2) {
		t.Error("the restored design ended in another state")
	}
}

func TestRestoreRejects(t *testing.T) {
	t.Parallel()
	d, err := New(5, Config{Seed: 1, Pool: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Refresh(mat.NewDense(5, 1, []float64{0, 1, 2, 3, 4}), nil); err != nil {
		t.Fatal(err)
	}
	good, _ := d.MarshalState()
	if _, err := Restore(good); err != nil {
		t.Fatalf("good state refused: %v", err)
	}
	for _, c := range []struct{ name, from, to string }{
		{"kind", `"kind":"active"`, `"kind":"landmark"`},
		{"n", `"n":5`, `"n":2`},
		{"next head", `"next":0`, `"next":5`},
		{"answered", `"answered":0`, `"answered":-1`},
		{"pool too big", `"pool":2`, `"pool":1`},
	} {
		bad := bytes.Replace(good, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, good) {
			t.Fatalf("%s: %q not in %s", c.name, c.from, good)
		}
		if _, err := Restore(bad); err == nil {
			t.Errorf("%s: restored %s", c.name, bad)
		}
	}
	pool := d.Pool(nil)
	k := pool[0].Key
	dup := bytes.Replace(good, []byte(keyJSON(pool[1].Key)), []byte(keyJSON(k)), 1)
	if _, err := Restore(dup); err == nil {
		t.Errorf("a pool with a question twice restored: %s", dup)
	}
}

func keyJSON(k triplet.Key) string {
	return "[" + itoa(k.Anchor) + "," + itoa(k.J) + "," + itoa(k.K) + ","
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n   int
		cfg Config
	}{
		{2, Config{}},
		{10, Config{WarmupPerItem: -1}},
		{10, Config{Pool: -3}},
		{10, Config{Repeats: MaxRepeats + 1}},
		{10, Config{Score: ScoreConfig{Rule: "x"}}},
	} {
		if _, err := New(c.n, c.cfg); err == nil {
			t.Errorf("New(%d, %+v): no error", c.n, c.cfg)
		}
	}
}

// TestApplyPoolToNewerState follows the app's contract: the worker scores
// the next pool on a copy of the state while answers keep arriving, and
// the writer applies it to the newer state, which keeps its answers.
func TestApplyPoolToNewerState(t *testing.T) {
	t.Parallel()
	const n = 20
	x := triplet.Gaussian(triplet.NewRand(6), n, 2, 1)
	d, err := New(n, Config{Seed: 3, WarmupPerItem: 2, Pool: 8})
	if err != nil {
		t.Fatal(err)
	}
	o := triplet.NewOracle(x, 0, 6)
	answers := drive(t, d, o, nil, d.Warmup(), 1000, nil)
	snapshot, _ := d.MarshalState()
	copyOfState, err := Restore(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	res, err := embed.Fit(context.Background(), n, answers, embed.Options{Method: embed.TSTE, Dim: 2, Seed: 1, MaxIter: 50})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := copyOfState.NextPool(res.X, answers)
	if err != nil {
		t.Fatal(err)
	}
	if copyOfState.Refreshes() != 0 || len(copyOfState.Pool(nil)) != 0 {
		t.Fatal("NextPool changed the design")
	}
	// Three more answers reach the live design meanwhile.
	for range 3 {
		nd := d.Open(nil, 1)[0]
		d.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
	}
	if err := d.ApplyPool(qs); err != nil {
		t.Fatal(err)
	}
	if d.Answered() != d.Warmup()+3 || d.Refreshes() != 1 {
		t.Errorf("after applying: %d answers, %d refreshes; want %d and 1", d.Answered(), d.Refreshes(), d.Warmup()+3)
	}
	// The same pool as a Refresh of the copy would install.
	if err := copyOfState.Refresh(res.X, answers); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Pool(nil), copyOfState.Pool(nil)) || len(qs) != 8 {
		t.Errorf("applied pool %v, refreshed pool %v", d.Pool(nil), copyOfState.Pool(nil))
	}
	for _, bad := range [][]Question{
		{{Key: triplet.Key{Anchor: 0, J: 1, K: n}}},
		{{Key: triplet.Key{Anchor: 0, J: 2, K: 1}}},
		make([]Question, 9),
	} {
		if err := d.ApplyPool(bad); err == nil {
			t.Errorf("pool %v applied", bad)
		}
	}
	if d.Refreshes() != 1 {
		t.Error("a refused pool counted as a refresh")
	}
}
