package landmark

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// expected enumerates the comparisons of section 2.3 straight from the
// paper's definition, independently of the index arithmetic:
// k1: d(x_i, x_j) < d(x_i, x_k) with x_i ∈ D and x_j, x_k ∈ L;
// k2: d(x_j, x_i) < d(x_j, x_k) with x_i ∈ D and x_j, x_k ∈ L;
// always three distinct items, options unordered.
func expected(n int, lm []int, v Variant) map[triplet.Key]bool {
	isLm := make(map[int]bool)
	for _, l := range lm {
		isLm[l] = true
	}
	want := make(map[triplet.Key]bool)
	for a := range n {
		for j := range n {
			for k := j + 1; k < n; k++ {
				if a == j || a == k {
					continue
				}
				switch v {
				case K1:
					if isLm[j] && isLm[k] {
						want[triplet.Key{Anchor: a, J: j, K: k}] = true
					}
				case K2:
					if isLm[a] && (isLm[j] || isLm[k]) {
						want[triplet.Key{Anchor: a, J: j, K: k}] = true
					}
				}
			}
		}
	}
	return want
}

func TestComparisonsMatchPaperDefinition(t *testing.T) {
	t.Parallel()
	for _, v := range []Variant{K1, K2} {
		for _, tc := range []struct {
			n  int
			lm []int
		}{
			{3, []int{0, 2}},
			{7, []int{1, 4}},
			{9, []int{0, 3, 8}},
			{12, []int{2, 3, 5, 11}},
			{15, []int{0, 1, 2, 3, 4, 5, 14}},
		} {
			d, err := New(tc.n, Config{Variant: v, Landmarks: tc.lm, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := expected(tc.n, tc.lm, v)
			got := make(map[triplet.Key]bool)
			for i := range d.Slots() {
				k, ok := d.KeyAt(i)
				if !ok {
					continue
				}
				if got[k] {
					t.Fatalf("%v n=%d: comparison %v at two indices", v, tc.n, k)
				}
				got[k] = true
				if !want[k] {
					t.Errorf("%v n=%d: %v is not a comparison of the design", v, tc.n, k)
				}
				if j, ok := d.Index(k); !ok || j != i {
					t.Errorf("%v n=%d: Index(%v) = %d, %v; want %d", v, tc.n, k, j, ok, i)
				}
				if j, ok := d.Index(triplet.Key{Anchor: k.Anchor, J: k.K, K: k.J}); !ok || j != i {
					t.Errorf("%v n=%d: Index with options swapped = %d, %v; want %d", v, tc.n, j, ok, i)
				}
			}
			if len(got) != len(want) || d.Comparisons() != len(want) {
				t.Errorf("%v n=%d L=%d: %d comparisons indexed, Comparisons() = %d, definition gives %d",
					v, tc.n, len(tc.lm), len(got), d.Comparisons(), len(want))
			}
			// Every question outside the design is rejected by Index.
			for a := range tc.n {
				for j := range tc.n {
					for k := j + 1; k < tc.n; k++ {
						key := triplet.Key{Anchor: a, J: j, K: k}
						if _, ok := d.Index(key); ok != want[key] {
							t.Errorf("%v n=%d: Index(%v) ok = %v, want %v", v, tc.n, key, ok, want[key])
						}
					}
				}
			}
		}
	}
}

// TestSizeAtScale checks the size the brief quotes for n = 10,000 items and
// 30 landmarks (4.35 million k1 comparisons): (n−L)·C(L,2) + L·C(L−1,2) =
// 9970·435 + 30·406 = 4,349,130, and for k2 (n−L)·L(L−1) + L·C(L−1,2) =
// 9970·870 + 12,180 = 8,686,080; with 3 repeats Size triples.
func TestSizeAtScale(t *testing.T) {
	t.Parallel()
	d1, err := New(10000, Config{Variant: K1, NumLandmarks: 30, Repeats: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := d1.Comparisons(); got != 4349130 {
		t.Errorf("k1 comparisons = %d, want 4349130", got)
	}
	if got := d1.Size(); got != 3*4349130 {
		t.Errorf("k1 size = %d, want %d", got, 3*4349130)
	}
	d2, err := New(10000, Config{Variant: K2, NumLandmarks: 30, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := d2.Comparisons(); got != 8686080 {
		t.Errorf("k2 comparisons = %d, want 8686080", got)
	}
	// Open with a small limit on the big design returns distinct design
	// comparisons, all wanting 3 answers.
	open := d1.Open(nil, 100)
	if len(open) != 100 {
		t.Fatalf("Open(100) returned %d", len(open))
	}
	seen := map[triplet.Key]bool{}
	for _, nd := range open {
		if seen[nd.Key] || nd.Answers != 3 {
			t.Fatalf("bad need %+v (seen %v)", nd, seen[nd.Key])
		}
		seen[nd.Key] = true
		if _, ok := d1.Index(nd.Key); !ok {
			t.Fatalf("open comparison %v not in design", nd.Key)
		}
	}
	st, err := d1.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if len(st) > 2000 {
		t.Errorf("state of a fresh 4.35M-comparison design is %d bytes, want it compact", len(st))
	}
}

func answer(k triplet.Key) triplet.Triplet {
	return triplet.Triplet{Anchor: k.Anchor, Closer: k.J, Farther: k.K}
}

// TestLeastAnsweredFirst answers, one at a time, the first comparison Open
// offers, and checks that coverage grows evenly: after every answer the
// counts of all comparisons differ by at most one, the design is done after
// exactly Size answers, never accepts more than Repeats answers to a
// comparison, and offers nothing when done.
func TestLeastAnsweredFirst(t *testing.T) {
	t.Parallel()
	for _, v := range []Variant{K1, K2} {
		d, err := New(20, Config{Variant: v, NumLandmarks: 5, Repeats: 3, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		size := d.Size()
		var buf []design.Need
		for step := range size {
			if d.Done() {
				t.Fatalf("%v: done after %d of %d answers", v, step, size)
			}
			buf = d.Open(buf[:0], 1)
			if len(buf) != 1 {
				t.Fatalf("%v: Open returned %d needs at step %d", v, len(buf), step)
			}
			nd := buf[0]
			i, _ := d.Index(nd.Key)
			if want := d.Repeats() - d.Count(i); nd.Answers != want {
				t.Fatalf("%v: need %+v, want Answers %d", v, nd, want)
			}
			if !d.Record(answer(nd.Key)) {
				t.Fatalf("%v: Record refused an open comparison", v)
			}
			lo, hi := 255, 0
			for s := range d.Slots() {
				if _, ok := d.KeyAt(s); ok {
					lo, hi = min(lo, d.Count(s)), max(hi, d.Count(s))
				}
			}
			if hi-lo > 1 {
				t.Fatalf("%v: after %d answers counts range %d..%d", v, step+1, lo, hi)
			}
			if p := d.Progress(); p.Answered != step+1 || p.MinAnswers != lo {
				t.Fatalf("%v: progress %+v after %d answers (min count %d)", v, p, step+1, lo)
			}
		}
		if !d.Done() {
			t.Fatalf("%v: not done after %d answers", v, size)
		}
		if got := d.Open(nil, 0); len(got) != 0 {
			t.Errorf("%v: done design offers %d comparisons", v, len(got))
		}
		// No comparison takes a fourth answer.
		for s := range d.Slots() {
			if k, ok := d.KeyAt(s); ok {
				if d.Record(answer(k)) {
					t.Fatalf("%v: accepted answer beyond repeats for %v", v, k)
				}
				if d.Count(s) != 3 {
					t.Fatalf("%v: count %d", v, d.Count(s))
				}
			}
		}
		if p := d.Progress(); p.Answered != size || p.Covered != d.Comparisons() || p.Fraction() != 1 {
			t.Errorf("%v: final progress %+v", v, p)
		}
	}
}

// TestOpenOrder checks Open(all): least answered first, each comparison
// once, ties not in index order (a seeded shuffle), a limit that returns a
// prefix, and that answers outside the design are refused.
func TestOpenOrder(t *testing.T) {
	t.Parallel()
	d, err := New(30, Config{Variant: K1, Landmarks: []int{3, 9, 17, 25}, Repeats: 2, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	all := d.Open(nil, 0)
	if len(all) != d.Comparisons() {
		t.Fatalf("Open(all) = %d needs, want %d", len(all), d.Comparisons())
	}
	idx := make([]int, len(all))
	for k, nd := range all {
		idx[k], _ = d.Index(nd.Key)
	}
	if slices.IsSorted(idx) {
		t.Errorf("ties served in index order, want a seeded shuffle")
	}
	// Answer the second half of that order (out of order for the cursor).
	for _, nd := range all[len(all)/2:] {
		if !d.Record(answer(nd.Key)) {
			t.Fatal("Record refused")
		}
	}
	all = d.Open(nil, 0)
	if len(all) != d.Comparisons() {
		t.Fatalf("Open(all) = %d needs after answers, want %d", len(all), d.Comparisons())
	}
	for k, nd := range all {
		want := 2
		if k >= (d.Comparisons()+1)/2 {
			want = 1
		}
		if nd.Answers != want {
			t.Fatalf("need %d of Open(all) wants %d answers, want %d", k, nd.Answers, want)
		}
	}
	if p := d.Open(nil, 5); !slices.Equal(p, all[:5]) {
		t.Errorf("Open(5) = %v, want the first 5 of Open(all) %v", p, all[:5])
	}
	for _, bad := range [][3]int{{0, 1, 2}, {3, 9, 3}, {0, 1, 3}, {40, 3, 9}} {
		if d.Record(triplet.Triplet{Anchor: bad[0], Closer: bad[1], Farther: bad[2]}) {
			t.Errorf("Record(%v) accepted an answer outside the design", bad)
		}
	}
	// The answer (x; l_k, l_j) with options in either order counts.
	if !d.Record(triplet.Triplet{Anchor: 0, Closer: 25, Farther: 3}) {
		t.Error("Record refused a design comparison with options reversed")
	}
}

func TestOpenExcept(t *testing.T) {
	t.Parallel()
	d, err := New(25, Config{Variant: K2, NumLandmarks: 4, Repeats: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	full := d.Open(nil, 0)
	// Skip every other comparison and lease one answer of the rest.
	var seen int
	got := d.OpenExcept(nil, 10, func(i int, nd *design.Need) bool {
		seen++
		if k, _ := d.KeyAt(i); k != nd.Key {
			t.Fatalf("skip called with index %d for %v", i, nd.Key)
		}
		if seen%2 == 0 {
			return true
		}
		nd.Answers--
		return false
	})
	if len(got) != 10 {
		t.Fatalf("OpenExcept returned %d", len(got))
	}
	for k, nd := range got {
		if nd.Key != full[2*k].Key || nd.Answers != 2 {
			t.Fatalf("OpenExcept[%d] = %+v, want %v with 2 answers", k, nd, full[2*k].Key)
		}
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) ([]design.Need, []byte) {
		d, err := New(40, Config{Variant: K1, NumLandmarks: 6, Repeats: 2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var log []design.Need
		var buf []design.Need
		for range 300 {
			buf = d.Open(buf[:0], 7)
			log = append(log, buf...)
			for _, nd := range buf[:3] {
				d.Record(answer(nd.Key))
			}
		}
		st, err := d.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		return log, st
	}
	a, sa := run(42)
	b, sb := run(42)
	if !slices.Equal(a, b) || !bytes.Equal(sa, sb) {
		t.Error("same seed, same answers: different questions or state")
	}
	c, _ := run(43)
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same questions")
	}
	// Random landmarks depend on the seed and are valid.
	d1, _ := New(1000, Config{Variant: K1, NumLandmarks: 15, Seed: 1})
	d2, _ := New(1000, Config{Variant: K1, NumLandmarks: 15, Seed: 1})
	d3, _ := New(1000, Config{Variant: K1, NumLandmarks: 15, Seed: 2})
	if !slices.Equal(d1.Landmarks(), d2.Landmarks()) || slices.Equal(d1.Landmarks(), d3.Landmarks()) {
		t.Errorf("landmarks %v %v %v: want equal for equal seeds, different otherwise", d1.Landmarks(), d2.Landmarks(), d3.Landmarks())
	}
	if len(d1.Landmarks()) != 15 || !slices.IsSorted(d1.Landmarks()) || len(slices.Compact(slices.Clone(d1.Landmarks()))) != 15 {
		t.Errorf("landmarks %v", d1.Landmarks())
	}
}

// TestTiesSpread checks that the seeded tie order is not biased towards a
// part of the index space: of the first quarter of comparisons served, the
// share whose anchor lies in the first half of the items is near 1/2.
// (The anchor is the slowest-moving part of the k1 index; an order that
// walked the index space would give 1 or 0.)
func TestTiesSpread(t *testing.T) {
	t.Parallel()
	d, err := New(400, Config{Variant: K1, NumLandmarks: 8, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	first := d.Open(nil, d.Comparisons()/4)
	low := 0
	for _, nd := range first {
		if nd.Key.Anchor < 200 {
			low++
		}
	}
	// 2,800 draws: a fair share has standard deviation ~0.01.
	if f := float64(low) / float64(len(first)); f < 0.45 || f > 0.55 {
		t.Errorf("share of anchors in the first half = %.3f, want about 0.5", f)
	}
}

// TestStateRoundTrip records answers out of order, with repeats and
// surplus, saves and restores at many points, and checks that the
// restored design offers the same questions and evolves identically.
func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []Variant{K1, K2} {
		d, err := New(30, Config{Variant: v, NumLandmarks: 5, Repeats: 3, Seed: 21})
		if err != nil {
			t.Fatal(err)
		}
		rng := triplet.NewRand(99)
		for step := 0; !d.Done(); step++ {
			// Answer a random one of the first 20 open comparisons, flipped
			// half of the time (the answer's direction does not matter).
			open := d.Open(nil, 20)
			k := open[rng.IntN(len(open))].Key
			tr := answer(k)
			if rng.IntN(2) == 0 {
				tr = tr.Flip()
			}
			d.Record(tr)
			if step%97 == 0 || d.Done() {
				st, err := d.MarshalState()
				if err != nil {
					t.Fatal(err)
				}
				r, err := Restore(st)
				if err != nil {
					t.Fatalf("%v step %d: %v", v, step, err)
				}
				if r.Done() != d.Done() || r.Progress() != d.Progress() {
					t.Fatalf("%v step %d: restored progress %+v, want %+v", v, step, r.Progress(), d.Progress())
				}
				if a, b := d.Open(nil, 0), r.Open(nil, 0); !slices.Equal(a, b) {
					t.Fatalf("%v step %d: restored design offers different comparisons", v, step)
				}
				st2, _ := r.MarshalState()
				if !bytes.Equal(st, st2) {
					t.Fatalf("%v step %d: state changed by a round trip", v, step)
				}
				d = r // continue with the restored design
			}
		}
		if d.Progress().Answered != d.Size() {
			t.Errorf("%v: done with %d of %d answers", v, d.Progress().Answered, d.Size())
		}
	}
}

func TestRestoreRejectsBadState(t *testing.T) {
	t.Parallel()
	d, _ := New(10, Config{Variant: K1, NumLandmarks: 3, Seed: 1})
	good, _ := d.MarshalState()
	for name, st := range map[string]string{
		"not json":      "{",
		"wrong kind":    `{"kind":"basis","version":1}`,
		"bad variant":   `{"kind":"landmark","version":1,"n":10,"variant":"k3","landmarks":[1,2],"repeats":1}`,
		"bad landmarks": `{"kind":"landmark","version":1,"n":10,"variant":"k1","landmarks":[1,1],"repeats":1,"counts":""}`,
	} {
		if _, err := Restore([]byte(st)); err == nil {
			t.Errorf("%s: Restore accepted %s", name, st)
		}
	}
	short := `{"kind":"landmark","version":1,"n":10,"variant":"k1","landmarks":[1,2,3],"repeats":1,"answered":0,"counts":"` +
		base64.StdEncoding.EncodeToString(deflate(encodeRuns(make([]uint8, 5)))) + `"}`
	if _, err := Restore([]byte(short)); err == nil || !strings.Contains(err.Error(), "runs cover") {
		t.Errorf("short counts: Restore gave %v, want an error about coverage", err)
	}
	if _, err := Restore(good); err != nil {
		t.Errorf("good state: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		n   int
		cfg Config
	}{
		"few items":          {2, Config{Variant: K1, NumLandmarks: 2}},
		"no variant":         {10, Config{NumLandmarks: 2}},
		"one landmark":       {10, Config{Variant: K1, NumLandmarks: 1}},
		"too many":           {10, Config{Variant: K2, NumLandmarks: 11}},
		"landmark range":     {10, Config{Variant: K1, Landmarks: []int{1, 10}}},
		"duplicate landmark": {10, Config{Variant: K1, Landmarks: []int{1, 4, 1}}},
		"count mismatch":     {10, Config{Variant: K1, Landmarks: []int{1, 4}, NumLandmarks: 3}},
		"repeats":            {10, Config{Variant: K1, NumLandmarks: 3, Repeats: 256}},
		"negative repeats":   {10, Config{Variant: K1, NumLandmarks: 3, Repeats: -1}},
	} {
		if _, err := New(tc.n, tc.cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, tc.cfg)
		}
	}
}

func TestRandomDesign(t *testing.T) {
	t.Parallel()
	r, err := NewRandom(50, 4)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Open(nil, 10)
	if b := r.Open(nil, 10); !slices.Equal(a, b) {
		t.Error("Open without Record changed")
	}
	distinct := map[triplet.Key]bool{}
	for _, nd := range a {
		k := nd.Key
		if k.J >= k.K || k.Anchor == k.J || k.Anchor == k.K || k.K >= 50 || k.J < 0 || nd.Answers != 1 {
			t.Fatalf("bad random question %+v", nd)
		}
		distinct[k] = true
	}
	if len(distinct) < 9 {
		t.Errorf("10 random questions over 50 items have only %d distinct", len(distinct))
	}
	if !r.Record(answer(a[0].Key)) || r.Record(triplet.Triplet{Anchor: 1, Closer: 1, Farther: 2}) {
		t.Error("Record: want valid answers accepted, invalid refused")
	}
	if r.Done() {
		t.Error("random design done")
	}
	if next := r.Open(nil, 1); next[0] != a[1] {
		t.Errorf("after one answer Open starts at %v, want the next question %v", next[0], a[1])
	}
	st, _ := r.MarshalState()
	r2, err := RestoreRandom(st)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Open(nil, 20), r2.Open(nil, 20)) || r2.Answered() != 1 {
		t.Error("restored random design differs")
	}
	if _, err := RestoreRandom([]byte(`{"kind":"landmark","version":1}`)); err == nil {
		t.Error("RestoreRandom accepted a landmark state")
	}
}

func TestFeistelIsPermutation(t *testing.T) {
	t.Parallel()
	for _, size := range []uint64{1, 2, 5, 64, 1000} {
		f := newFeistel(size, 77, 0)
		seen := make([]bool, f.domain())
		for p := range f.domain() {
			s := f.at(p)
			if s >= f.domain() || seen[s] {
				t.Fatalf("size %d: position %d maps to %d (repeat or out of range)", size, p, s)
			}
			seen[s] = true
		}
		if f.domain() < size || f.domain() > 4*max(size, 1) {
			t.Errorf("size %d: domain %d", size, f.domain())
		}
	}
}

// record calls d.Record and turns a panic (a count or histogram indexed past
// Repeats) into a test failure that names the answer.
func record(t *testing.T, d *Design, tr triplet.Triplet) (ok bool) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("Record(%v) with repeats %d panicked: %v", tr, d.repeats, e)
		}
	}()
	return d.Record(tr)
}

// TestRepeatsServedExactly drives a small design as a crowd would, one
// question at a time from Open, and counts how often each comparison is
// asked for, for repeats 1, 2 and 3.
//
// The design: n = 6 items, landmarks L = {1, 3, 4}, so the non-landmarks are
// {0, 2, 5}. Counted by hand from section 2.3 (and checked against the
// enumeration expected):
//
//	k1 (anchor x; options l_j, l_k): each of the 3 non-landmarks with each
//	of the C(3,2) = 3 landmark pairs = 9, plus each landmark with the one
//	pair of the other two landmarks = 3; 12 comparisons.
//	k2 (anchor l_j; options x, l_k): each of the 3 landmark anchors with
//	each of the 3 non-landmarks and each of the 2 other landmarks = 18,
//	plus each landmark anchor with the other two landmarks as options
//	(one question, counted once) = 3; 21 comparisons.
//
// With repeats r the design must ask every comparison exactly r times (the
// k-th time wanting r−k+1 more answers), be done after exactly r × 12 (k1)
// or r × 21 (k2) answers, and then offer nothing and refuse every answer.
func TestRepeatsServedExactly(t *testing.T) {
	t.Parallel()
	lm := []int{1, 3, 4}
	for _, tc := range []struct {
		v           Variant
		comparisons int
	}{{K1, 12}, {K2, 21}} {
		want := expected(6, lm, tc.v)
		if len(want) != tc.comparisons {
			t.Fatalf("%v: the definition gives %d comparisons, the hand count %d", tc.v, len(want), tc.comparisons)
		}
		c := tc.comparisons
		for _, r := range []int{1, 2, 3} {
			d, err := New(6, Config{Variant: tc.v, Landmarks: lm, Repeats: r, Seed: 8})
			if err != nil {
				t.Fatal(err)
			}
			if d.Repeats() != r || d.Comparisons() != c || d.Size() != r*c {
				t.Fatalf("%v r=%d: Repeats %d, Comparisons %d, Size %d; want %d, %d, %d",
					tc.v, r, d.Repeats(), d.Comparisons(), d.Size(), r, c, r*c)
			}
			if p, w := d.Progress(), (Progress{Answered: 0, Needed: r * c, Covered: 0, Comparisons: c, MinAnswers: 0}); p != w {
				t.Fatalf("%v r=%d: fresh progress %+v, want %+v", tc.v, r, p, w)
			}
			// Open(all) on the fresh design: every comparison once, wanting r.
			all := d.Open(nil, 0)
			if len(all) != c {
				t.Fatalf("%v r=%d: Open(all) lists %d comparisons, want %d", tc.v, r, len(all), c)
			}
			listed := map[triplet.Key]bool{}
			for _, nd := range all {
				if !want[nd.Key] || listed[nd.Key] || nd.Answers != r {
					t.Fatalf("%v r=%d: Open(all) lists %+v (in design %v, listed before %v), want each comparison once wanting %d",
						tc.v, r, nd, want[nd.Key], listed[nd.Key], r)
				}
				listed[nd.Key] = true
			}
			// Serve and answer one question at a time until done.
			asked := map[triplet.Key]int{}
			total := 0
			for !d.Done() {
				if total == r*c {
					t.Fatalf("%v r=%d: not done after %d answers, want done after exactly %d", tc.v, r, total, r*c)
				}
				// Open(all) lists exactly the comparisons asked fewer than r
				// times so far, each wanting the answers it still lacks.
				open := d.Open(nil, 0)
				lacking := 0
				for k := range want {
					if asked[k] < r {
						lacking++
					}
				}
				if len(open) != lacking {
					t.Fatalf("%v r=%d: after %d answers Open(all) lists %d comparisons, want the %d still lacking answers", tc.v, r, total, len(open), lacking)
				}
				for _, nd := range open {
					if nd.Answers != r-asked[nd.Key] {
						t.Fatalf("%v r=%d: after %d answers Open(all) lists %+v, want %d answers (asked %d times)", tc.v, r, total, nd, r-asked[nd.Key], asked[nd.Key])
					}
				}
				nd := d.Open(nil, 1)
				if len(nd) != 1 {
					t.Fatalf("%v r=%d: Open(1) returned %d needs after %d answers", tc.v, r, len(nd), total)
				}
				k := nd[0].Key
				asked[k]++
				total++
				if want := r - asked[k] + 1; nd[0].Answers != want {
					t.Fatalf("%v r=%d: %v asked for the %d-th time wants %d answers, want %d", tc.v, r, k, asked[k], nd[0].Answers, want)
				}
				tr := answer(k)
				if total%2 == 0 {
					tr = tr.Flip() // either direction answers the question
				}
				if !record(t, d, tr) {
					t.Fatalf("%v r=%d: Record refused %v, the question Open served", tc.v, r, tr)
				}
			}
			if total != r*c {
				t.Errorf("%v r=%d: done after %d answers, want %d", tc.v, r, total, r*c)
			}
			for k := range want {
				if asked[k] != r {
					t.Errorf("%v r=%d: %v asked %d times, want %d", tc.v, r, k, asked[k], r)
				}
			}
			for k := range asked {
				if !want[k] {
					t.Errorf("%v r=%d: asked %v, which is not in the design", tc.v, r, k)
				}
			}
			// Done: nothing open, full progress, every further answer refused.
			if got := d.Open(nil, 0); len(got) != 0 {
				t.Errorf("%v r=%d: the done design offers %v", tc.v, r, got)
			}
			full := Progress{Answered: r * c, Needed: r * c, Covered: c, Comparisons: c, MinAnswers: r}
			if p := d.Progress(); p != full {
				t.Errorf("%v r=%d: final progress %+v, want %+v", tc.v, r, p, full)
			}
			for k := range want {
				if record(t, d, answer(k)) {
					t.Errorf("%v r=%d: accepted answer %d to %v", tc.v, r, r+1, k)
				}
				if i, _ := d.Index(k); d.Count(i) != r {
					t.Errorf("%v r=%d: %v has %d answers, want %d", tc.v, r, k, d.Count(i), r)
				}
			}
			if p := d.Progress(); p != full || !d.Done() {
				t.Errorf("%v r=%d: refused answers changed the progress to %+v (done %v)", tc.v, r, p, d.Done())
			}
		}
	}
}

// TestRepeatsBounds checks the ends of the accepted range: Repeats 0 means 1,
// and MaxRepeats = 255 (the largest count a byte holds) is accepted.
// (256 and -1 are refused in TestConfigErrors.)
func TestRepeatsBounds(t *testing.T) {
	t.Parallel()
	// n = 3, L = {0, 1}: one k1 comparison (2; 0, 1).
	d, err := New(3, Config{Variant: K1, Landmarks: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Repeats() != 1 || d.Size() != 1 {
		t.Errorf("Repeats 0: Repeats() = %d, Size() = %d, want 1 and 1", d.Repeats(), d.Size())
	}
	d, err = New(3, Config{Variant: K1, Landmarks: []int{0, 1}, Repeats: MaxRepeats})
	if err != nil {
		t.Fatalf("Repeats %d refused: %v", MaxRepeats, err)
	}
	if d.Comparisons() != 1 || d.Size() != 255 {
		t.Errorf("Repeats 255: Comparisons %d, Size %d, want 1 and 255", d.Comparisons(), d.Size())
	}
	for k := 0; k < 255; k++ {
		if !record(t, d, triplet.Triplet{Anchor: 2, Closer: 0, Farther: 1}) {
			t.Fatalf("answer %d refused", k+1)
		}
	}
	if !d.Done() || record(t, d, triplet.Triplet{Anchor: 2, Closer: 1, Farther: 0}) {
		t.Errorf("after 255 answers: done %v, want done and the 256th refused", d.Done())
	}
}
