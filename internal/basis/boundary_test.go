package basis

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// The tests in this file pin behaviour that the rest of the suite left
// open: the empty-lens fallback of the median rule, the numbers Restore's
// errors quote, a comparison shared by two partitions in a saved state, and
// the candidate a saved state names. Each was written against a mutant that
// survived the rest of the suite (docs/mutation/basis.md).

// noPanic runs f and turns a panic into a test failure naming what was
// called, so that an index past the end of a slice fails as an assertion.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Errorf("%s panicked: %v", what, e)
		}
	}()
	f()
}

// TestMedianEmptyLensFallback checks the rule coordinatesBy documents for
// a lens that holds no axis point: the coordinate is the index in A_i of
// the axis point y with the smallest d(y) = max(|r_u[y] − r_u[x]|,
// |r_v[y] − r_v[x]|), the larger of its two rank differences from x. A run
// never reaches the rule (an axis is conv̂ of its endpoints u and v, every
// item is in conv̂ or above one of its points, and that point lies in the
// item's lens), so the rank tables are written by hand: axis points 0, 1
// (and 2), the item x the last one, u = axis[0] has r_u = 0 and
// v = axis[last] has r_v = 0, and no axis point y has both r_u[y] < r_u[x]
// and r_v[y] < r_v[x] (the lens is empty). The distances d were computed by hand. On a tie the first axis
// point (the one nearer u) wins, which the strict < of median gives; the
// doc comment names no tie rule, the test pins the current one.
func TestMedianEmptyLensFallback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		axis   []int
		ru, rv []int
		x      int
		want   float64
	}{
		// Three points on a line, x in the middle and the axis only the
		// two ends: d(0) = max(|0−1|, |2−1|) = 1, d(1) = max(|2−1|, |0−1|)
		// = 1; a tie, so index 0.
		{"tie of two", []int{0, 1}, []int{0, 2, 1}, []int{2, 0, 1}, 2, 0},
		// d(0) = max(|0−1|, |3−1|) = 2, d(1) = max(|2−1|, |2−1|) = 1,
		// d(2) = max(|3−1|, |0−1|) = 2: index 1, neither end.
		{"middle nearest", []int{0, 1, 2}, []int{0, 2, 3, 1}, []int{3, 2, 0, 1}, 3, 1},
		// d(0) = max(|0−3|, |3−2|) = 3, d(1) = max(|2−3|, |4−2|) = 2,
		// d(2) = max(|4−3|, |0−2|) = 2: a tie of 1 and 2, so index 1.
		// The larger difference of axis point 0 is the negative one
		// (r_u[0] − r_u[x] = −3): without the absolute value it would
		// count as 1 and win.
		{"negative difference larger", []int{0, 1, 2}, []int{0, 2, 4, 3, 1}, []int{3, 4, 0, 2, 1}, 3, 1},
	} {
		// The lens of x, as coordinatesBy builds it, must be empty.
		for _, y := range c.axis {
			if c.ru[y] <= c.ru[c.x] && c.rv[y] <= c.rv[c.x] {
				t.Fatalf("%s: axis point %d lies in the lens of %d", c.name, y, c.x)
			}
		}
		noPanic(t, "median of an empty lens ("+c.name+")", func() {
			if got := median(nil, c.axis, c.ru, c.rv, c.x); got != c.want {
				t.Errorf("%s: median of an empty lens = %v, want index %v", c.name, got, c.want)
			}
		})
	}
}

// TestRestoreErrorsQuoteNumbers checks the numbers in Restore's errors
// against the state that was edited, for n = 30 items: an item out of
// range names the range 0..29 of the item indices (as match player and as
// a job's item, the value written being 30), and an open comparison that
// already has its Repeats = 3 answers (2 for J and 1 for K written into a
// fresh state) quotes 2 + 1 = 3 answers.
func TestRestoreErrorsQuoteNumbers(t *testing.T) {
	t.Parallel()
	const n = 30
	x := triplet.Gaussian(triplet.NewRand(4), n, 2, 1)
	o := triplet.NewOracle(x, 0, 4)
	fresh := New(n, Config{Seed: 4, Repeats: 3})
	s := New(n, Config{Seed: 4})
	for len(s.jobs) == 0 { // answer until the first sort runs
		for _, nd := range s.Open(nil, 0) {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
	}
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
	for _, c := range []struct {
		from *Scheme
		edit func(sn *snapshot)
		want string
	}{
		{fresh, func(sn *snapshot) { sn.Matches[0].P[1] = n }, "match player 30 outside 0..29"},
		{s, func(sn *snapshot) { sn.Jobs[0].Items[0] = n }, "job item 30 outside 0..29"},
		{fresh, func(sn *snapshot) { sn.Open[3], sn.Open[4] = 2, 1 }, "already has 3 answers"},
	} {
		sn := load(c.from)
		c.edit(&sn)
		bad, _ := json.Marshal(sn)
		_, err := Restore(bad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
	}
}

// TestRestoreSharedComparison: the saved form of an open comparison lists
// its owners (the count, then job and partition of each), and decide
// advances every owner. A run never shares a comparison (each sort has its
// own head and its partitions are disjoint), so the state is built by
// hand: two Extra sorts for head 0 of the same two items 1 and 2, whose
// one comparison (0; 1, 2) is opened by the first sort and joined by the
// second. The saved state must restore to the same state, with the one
// comparison open and owned by both sorts, and its one answer must finish
// both sorts (and so the scheme), before and after the round trip.
func TestRestoreSharedComparison(t *testing.T) {
	t.Parallel()
	s := newEmpty(5, Config{Seed: 3, Extra: true})
	s.pcg = rand.NewPCG(3, 0x636c6f736572)
	s.rng = rand.New(s.pcg)
	s.phase = PhaseExtra
	s.extraJobs = 2
	s.newJob(0, []int{1, 2}, true)
	s.newJob(0, []int{1, 2}, true)
	k := triplet.Key{Anchor: 0, J: 1, K: 2}
	if e := s.open[k]; s.NumOpen() != 1 || e == nil || len(e.owners) != 2 {
		t.Fatalf("set-up: %d open, entry %+v; want (0; 1, 2) open for two owners", s.NumOpen(), e)
	}
	data, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	var r *Scheme
	noPanic(t, "Restore of a shared comparison", func() {
		r, err = Restore(data)
	})
	if err != nil || r == nil {
		t.Fatalf("a state with a shared comparison is refused: %v", err)
	}
	if again, _ := r.MarshalState(); !bytes.Equal(again, data) {
		t.Fatalf("the round trip changed the state:\n%s\n%s", data, again)
	}
	for _, sc := range []*Scheme{s, r} {
		e := sc.open[k]
		if e == nil || !slices.Equal(e.owners, []owner{{0, 0}, {1, 0}}) {
			t.Fatalf("open comparison %+v, want owners job 0 and job 1, partition 0 each", e)
		}
		for id, j := range sc.jobs {
			if g := j.Segs[0]; g == nil || g.wait != 1 {
				t.Fatalf("job %d partition 0: %+v, want one comparison waited for", id, g)
			}
		}
		if !sc.Record(triplet.Triplet{Anchor: 0, Closer: 1, Farther: 2}) {
			t.Fatal("the shared comparison's answer is refused")
		}
		if !sc.Done() || sc.extraDone != 2 || len(sc.jobs) != 0 {
			t.Errorf("after the answer: done %v, %d of 2 sorts finished, %d jobs left", sc.Done(), sc.extraDone, len(sc.jobs))
		}
	}
}

// TestSnapshotNamesTheCandidate: the saved state's "cand" is the candidate
// of Algorithm 1, line 12, while the scheme sorts for it (phase sort,
// stage cand: every open comparison has it as anchor), and -1 (no item)
// at every other time, before the first candidate and after each
// candidate's test (line 19), so that a saved state never names an item as
// a candidate that is not one. The run (200 Gaussian points in 3-D, seed
// 21) tests at least one candidate and goes on to another sort after it.
func TestSnapshotNamesTheCandidate(t *testing.T) {
	t.Parallel()
	const n = 200
	x := triplet.Gaussian(triplet.NewRand(21), n, 3, 1)
	o := triplet.NewOracle(x, 0, 21)
	s := New(n, Config{Seed: 21})
	during, after := 0, 0
	tested := false
	for {
		data, err := s.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		var sn struct {
			Phase, Stage string
			Cand         int
		}
		if err := json.Unmarshal(data, &sn); err != nil {
			t.Fatal(err)
		}
		open := s.Open(nil, 0)
		want := -1
		if sn.Phase == PhaseSort && sn.Stage == stageCand {
			want = open[0].Key.Anchor
			tested = true
			during++
		} else if tested {
			after++
		}
		if sn.Cand != want {
			t.Fatalf("phase %s, stage %s, %s: saved cand %d, want %d", sn.Phase, sn.Stage, s.Progress().Step, sn.Cand, want)
		}
		if s.Done() {
			break
		}
		for _, nd := range open {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
	}
	if during == 0 || after == 0 || s.DHat() < 2 {
		t.Fatalf("%d states during a candidate sort, %d after one, d̂ %d: a case was never checked", during, after, s.DHat())
	}
}
