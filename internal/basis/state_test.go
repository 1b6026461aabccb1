package basis

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
)

// drive answers the scheme's open comparisons m at a time (each handed to
// as many annotators as it wants) from the oracle, calling between(s) after
// every recorded answer; between may replace the scheme.
func drive(s *Scheme, o *triplet.Oracle, m int, between func(s *Scheme) *Scheme) *Scheme {
	var needs []design.Need
	for !s.Done() {
		needs = s.Open(needs[:0], m)
		var qs []triplet.Key
		for _, nd := range needs {
			for r := 0; r < nd.Answers && len(qs) < m; r++ {
				qs = append(qs, nd.Key)
			}
		}
		for _, k := range qs {
			if !s.Record(o.Answer(k.Anchor, k.J, k.K)) {
				panic("answer refused")
			}
			s = between(s)
		}
	}
	return s
}

// TestRestoreAtRandomPointsGivesSameResult stops the scheme at random
// points, drops it, restores it from its marshalled state and continues:
// the run ends with exactly the result of an uninterrupted run with the
// same seed and answers (noisy oracle, 3 repeats, Extra phase).
// roundTrip marshals s and restores the result.
func roundTrip(t *testing.T, s *Scheme) ([]byte, *Scheme) {
	t.Helper()
	data, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	return data, r
}

func TestRestoreAtRandomPointsGivesSameResult(t *testing.T) {
	t.Parallel()
	const n = 120
	x := triplet.Gaussian(triplet.NewRand(21), n, 3, 1)
	cfg := Config{Seed: 21, Repeats: 3, Extra: true}

	ref := drive(New(n, cfg), triplet.NewOracle(x, 0.1, 21), 7, func(s *Scheme) *Scheme { return s })

	rng := triplet.NewRand(99)
	restores := 0
	got := drive(New(n, cfg), triplet.NewOracle(x, 0.1, 21), 7, func(s *Scheme) *Scheme {
		if rng.IntN(150) != 0 {
			return s
		}
		data, r := roundTrip(t, s)
		again, err := r.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Fatalf("restore round trip changes the state (%d vs %d bytes)", len(data), len(again))
		}
		restores++
		return r
	})
	if restores < 20 {
		t.Fatalf("only %d restores", restores)
	}
	if !slices.Equal(got.Triplets(), ref.Triplets()) {
		t.Error("learned triplets differ")
	}
	if got.DHat() != ref.DHat() || !slices.EqualFunc(got.Axes(), ref.Axes(), slices.Equal[[]int]) {
		t.Errorf("basis differs: d̂ %d vs %d", got.DHat(), ref.DHat())
	}
	if !mat.Equal(got.Coordinates(), ref.Coordinates()) {
		t.Error("coordinates differ")
	}
	if got.Progress() != ref.Progress() {
		t.Errorf("progress %+v vs %+v", got.Progress(), ref.Progress())
	}
	a, _ := got.MarshalState()
	b, _ := ref.MarshalState()
	if !bytes.Equal(a, b) {
		t.Error("final states differ")
	}
	t.Logf("%d restores; d̂ = %d; %d triplets", restores, got.DHat(), len(got.Triplets()))
}

func TestRestoreRejectsBadState(t *testing.T) {
	t.Parallel()
	s := New(20, Config{Seed: 1})
	good, _ := s.MarshalState()
	if _, err := Restore(good); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"not json":               []byte("{"),
		"version":                bytes.Replace(good, []byte(`"version":1`), []byte(`"version":7`), 1),
		"phase":                  bytes.Replace(good, []byte(`"phase":"farthest"`), []byte(`"phase":"nap"`), 1),
		"too few items":          bytes.Replace(good, []byte(`"n":20`), []byte(`"n":2`), 1),
		"even repeats":           bytes.Replace(good, []byte(`"repeats":0`), []byte(`"repeats":2`), 1),
		"open for unknown match": bytes.Replace(good, []byte(`,1,-1,0,`), []byte(`,1,-1,77,`), 1),
		"open truncated":         bytes.Replace(good, []byte(`,1,-1,0,`), []byte(`,1,-1],"x":[`), 1),
	} {
		if bytes.Equal(data, good) && name != "not json" {
			t.Fatalf("%s: test did not change the state", name)
		}
		if _, err := Restore(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRestoreFreshAndFinished(t *testing.T) {
	t.Parallel()
	x := triplet.UniformCube(triplet.NewRand(31), 80, 2)
	s := New(80, Config{Seed: 31})
	_, r := roundTrip(t, s)
	if !slices.Equal(r.Open(nil, 0), s.Open(nil, 0)) || r.Progress() != s.Progress() {
		t.Error("fresh scheme restores differently")
	}
	Run(s, triplet.NewOracle(x, 0, 31), 0, 0)
	_, r = roundTrip(t, s)
	if !r.Done() || r.DHat() != s.DHat() || !mat.Equal(r.Coordinates(), s.Coordinates()) || !slices.Equal(r.Ranks(s.ends[0]), s.Ranks(s.ends[0])) {
		t.Error("finished scheme restores differently")
	}
}

// TestRestoreChecksItemsAndPartitions: Restore accepts the smallest scheme
// (3 items) and refuses states naming an item outside 0..n-1 (n itself,
// the first number out of range) as a match player, in a sorted order, as
// a job's head or item, a partition of fewer than 2 items (nothing to
// compare), an open comparison listing fewer owners than it counts, and
// one that already has all the answers it wants, and a finished state
// whose ends, hull or axes name item n, hold an empty axis or an axis end
// never sorted (these panicked in the coordinates before). Each bad state is a good one with one field changed, so the
// refusal is for that field.
func TestRestoreChecksItemsAndPartitions(t *testing.T) {
	t.Parallel()
	small, _ := New(3, Config{Seed: 1}).MarshalState()
	if _, err := Restore(small); err != nil {
		t.Fatalf("3 items: %v", err)
	}

	const n = 30
	x := triplet.Gaussian(triplet.NewRand(4), n, 2, 1)
	o := triplet.NewOracle(x, 0, 4)
	fresh := New(n, Config{Seed: 4})
	s := New(n, Config{Seed: 4})
	// Answer until the second sort runs: one order known, a job open.
	for len(s.orders) == 0 || len(s.jobs) == 0 {
		for _, nd := range s.Open(nil, 0) {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
	}
	done := New(n, Config{Seed: 4})
	Run(done, o, 0, 0)
	load := func(sc *Scheme) snapshot {
		data, err := sc.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		var sn snapshot
		if err := json.Unmarshal(data, &sn); err != nil {
			t.Fatal(err)
		}
		return sn
	}
	for name, change := range map[string]struct {
		from *Scheme
		edit func(sn *snapshot)
	}{
		"match player n": {fresh, func(sn *snapshot) { sn.Matches[0].P[1] = n }},
		"order item n":   {s, func(sn *snapshot) { sn.Orders[0].Order[n-1] = n }},
		"job head n":     {s, func(sn *snapshot) { sn.Jobs[0].Head = n }},
		"job item n":     {s, func(sn *snapshot) { sn.Jobs[0].Items[len(sn.Jobs[0].Items)-1] = n }},
		// the last open comparison of the tournament (one owner, its
		// match: ..., 1, -1, match) claims two owners
		"open owners truncated": {fresh, func(sn *snapshot) { sn.Open[len(sn.Open)-3] = 2 }},
		// the first open comparison already holds its one answer
		// (repeats 1): it would have been decided
		"open comparison full":               {fresh, func(sn *snapshot) { sn.Open[3] = 1 }},
		"open comparison full, answer for k": {fresh, func(sn *snapshot) { sn.Open[4] = 1 }},
		// a hand-edited finished state: its item lists name items too, and
		// its axes' ends must have sorted orders (coordinates read them)
		"end n":        {done, func(sn *snapshot) { sn.Ends[0] = n }},
		"hull point n": {done, func(sn *snapshot) { sn.HullSet[0] = n }},
		"axis point n": {done, func(sn *snapshot) { sn.Axes[0][len(sn.Axes[0])-1] = n }},
		"empty axis":   {done, func(sn *snapshot) { sn.Axes[0] = []int{} }},
		"axis end never sorted": {done, func(sn *snapshot) {
			sorted := map[int]bool{}
			for _, od := range sn.Orders {
				sorted[od.Head] = true
			}
			for x := range n {
				if !sorted[x] {
					sn.Axes[0][0] = x
					return
				}
			}
			t.Fatal("every item sorted")
		}},
		"one-item partition": {s, func(sn *snapshot) {
			g := &sn.Jobs[0].Segs[0]
			g.Lo, g.Hi, g.Pivot = 1, 2, sn.Jobs[0].Items[1]
		}},
	} {
		sn := load(change.from)
		good, _ := json.Marshal(sn)
		if _, err := Restore(good); err != nil {
			t.Fatalf("%s: the unchanged state is refused: %v", name, err)
		}
		change.edit(&sn)
		bad, _ := json.Marshal(sn)
		if bytes.Equal(bad, good) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, err := Restore(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
