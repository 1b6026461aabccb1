package landmark

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// The tests in this file pin the edges of the accepted ranges, the
// out-of-range queries and the cursor invariant; each was written against a
// mutant that survived the rest of the suite (docs/mutation/landmark.md).

// noPanic runs f and turns a panic into a test failure naming what was
// called, so that an index past the end of a table fails as an assertion.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Errorf("%s panicked: %v", what, e)
		}
	}()
	f()
}

// TestConfigEdges checks the ends of the accepted ranges of New and the
// numbers its errors quote:
//   - NumLandmarks 2 (the least a landmark pair needs) and NumLandmarks n
//     (every item a landmark) are accepted;
//   - a landmark outside the items is refused with the range 0..n-1 of the
//     item indices;
//   - a design whose index space exceeds 2^32 slots is refused with an error
//     quoting n and the block size, before the count table is allocated.
//     For k2 with n = 2^20 items and |L| = 2^17 landmarks the block is
//     |L|(|L|-1) = 131072·131071 = 17,179,738,112 slots per item
//     (hand computation), so n·block ≈ 1.8·10^16.
func TestConfigEdges(t *testing.T) {
	t.Parallel()
	d, err := New(10, Config{Variant: K1, NumLandmarks: 2, Seed: 1})
	if err != nil {
		t.Fatalf("NumLandmarks 2 refused: %v", err)
	}
	// n = 10, |L| = 2: (10-2)·C(2,2) + 2·C(1,2) = 8 comparisons.
	if len(d.Landmarks()) != 2 || d.Comparisons() != 8 {
		t.Errorf("NumLandmarks 2: landmarks %v, %d comparisons; want 2 landmarks, 8 comparisons", d.Landmarks(), d.Comparisons())
	}
	d, err = New(5, Config{Variant: K2, NumLandmarks: 5, Seed: 1})
	if err != nil {
		t.Fatalf("NumLandmarks n = 5 refused: %v", err)
	}
	// Every item a landmark: (5-5)·5·4 + 5·C(4,2) = 30 comparisons.
	if !slices.Equal(d.Landmarks(), []int{0, 1, 2, 3, 4}) || d.Comparisons() != 30 {
		t.Errorf("NumLandmarks 5 of 5: landmarks %v, %d comparisons; want all items, 30", d.Landmarks(), d.Comparisons())
	}

	_, err = New(10, Config{Variant: K1, Landmarks: []int{1, 12}})
	if err == nil || !strings.Contains(err.Error(), "landmark 12 outside items 0..9") {
		t.Errorf("landmark 12 of 10 items: error %v, want it to name the range 0..9", err)
	}

	const n, L = 1 << 20, 1 << 17
	lm := make([]int, L)
	for i := range lm {
		lm[i] = i
	}
	noPanic(t, "New of a design with 1.8e16 slots", func() {
		_, err = New(n, Config{Variant: K2, Landmarks: lm})
		want := fmt.Sprintf("%d items × %d landmark pairs is too large", n, 17179738112)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("oversized design: error %v, want %q", err, want)
		}
	})
}

// TestProgressFraction checks Fraction = Answered / Needed by hand (1 of 4
// is 0.25, 3 of 3 is 1) and that an empty design (Needed 0) counts as
// complete, as its doc comment says.
func TestProgressFraction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    Progress
		want float64
	}{
		{Progress{Answered: 1, Needed: 4}, 0.25},
		{Progress{Answered: 3, Needed: 3}, 1},
		{Progress{Answered: 0, Needed: 7}, 0},
		{Progress{}, 1},
	} {
		if got := tc.p.Fraction(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v.Fraction() = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestOutOfRangeQueries checks that the exported queries answer "not in
// the design" (rather than panic or return an index) for arguments just
// past the end: index Slots() for KeyAt and Count, and item n as anchor or
// option for Index. The design: k1, n = 6, L = {1, 3, 4}; its 3 landmark
// pairs give 6·3 = 18 slots.
func TestOutOfRangeQueries(t *testing.T) {
	t.Parallel()
	for _, v := range []Variant{K1, K2} {
		d, err := New(6, Config{Variant: v, Landmarks: []int{1, 3, 4}, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		// Give every comparison an answer, so that a read past the table
		// would not happen to see the zero an unused index has.
		for i := range d.Slots() {
			if k, ok := d.KeyAt(i); ok {
				d.Record(answer(k))
			}
		}
		s := d.Slots()
		noPanic(t, fmt.Sprintf("%v KeyAt(Slots())", v), func() {
			if k, ok := d.KeyAt(s); ok {
				t.Errorf("%v: KeyAt(%d) = %v, true for a design of %d slots", v, s, k, s)
			}
		})
		noPanic(t, fmt.Sprintf("%v Count(Slots())", v), func() {
			if c := d.Count(s); c != 0 {
				t.Errorf("%v: Count(%d) = %d for a design of %d slots, want 0", v, s, c, s)
			}
		})
		for _, k := range []triplet.Key{
			{Anchor: 6, J: 1, K: 3}, // anchor n: 6 items are 0..5
			{Anchor: 1, J: 3, K: 6}, // option n
			{Anchor: 1, J: 6, K: 3}, // option n, given first
		} {
			noPanic(t, fmt.Sprintf("%v Index(%v)", v, k), func() {
				if i, ok := d.Index(k); ok {
					t.Errorf("%v: Index(%v) = %d, true; item 6 is not among 6 items", v, k, i)
				}
			})
		}
	}
}

// TestRandomDesignEdges checks the random design at the ends of its ranges:
// 3 items (the least that make a question) are accepted and give questions
// over items 0..2; Open with limit 0 returns one question, as documented;
// and a fresh design (0 answers) survives a state round trip.
func TestRandomDesignEdges(t *testing.T) {
	t.Parallel()
	r, err := NewRandom(3, 5)
	if err != nil {
		t.Fatalf("NewRandom(3) refused: %v", err)
	}
	for _, limit := range []int{0, -1} {
		got := r.Open(nil, limit)
		if len(got) != 1 {
			t.Fatalf("Open(limit %d) returned %d questions, want 1", limit, len(got))
		}
		if k := got[0].Key; k.J >= k.K || k.K > 2 || k.J < 0 || k.Anchor == k.J || k.Anchor == k.K || got[0].Answers != 1 {
			t.Errorf("Open(limit %d) on 3 items = %+v", limit, got[0])
		}
	}
	st, err := r.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := RestoreRandom(st)
	if err != nil {
		t.Fatalf("RestoreRandom of a fresh design: %v", err)
	}
	if r2.Answered() != 0 || r2.N() != 3 || !slices.Equal(r.Open(nil, 5), r2.Open(nil, 5)) {
		t.Errorf("restored fresh design: %d answers over %d items, or different questions", r2.Answered(), r2.N())
	}
	if _, err := RestoreRandom([]byte(`{"kind":"random","version":1,"n":3,"answered":-1}`)); err == nil {
		t.Error("RestoreRandom accepted a negative answer count")
	}
}

// TestStateWorstCaseRuns round-trips the state whose run-length encoding is
// longest for its size: counts that alternate at every index, so every run
// has length 1 and takes 2 bytes (value, uvarint 1), 2·Slots() bytes in
// all, the most Restore's decompression limit must let through. The design:
// k1, n = 4, L = {0, 2}: one landmark pair, so slot x is the comparison
// (x; 0, 2), slots 0 and 2 are unused (count 0) and answering (1; 0, 2)
// and (3; 0, 2) gives counts 0, 1, 0, 1.
func TestStateWorstCaseRuns(t *testing.T) {
	t.Parallel()
	d, err := New(4, Config{Variant: K1, Landmarks: []int{0, 2}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []int{1, 3} {
		if !d.Record(triplet.Triplet{Anchor: a, Closer: 0, Farther: 2}) {
			t.Fatalf("answer (%d; 0, 2) refused", a)
		}
	}
	if got := encodeRuns(d.counts); len(got) != 2*d.Slots() {
		t.Fatalf("runs of counts %v take %d bytes, want 2·%d", d.counts, len(got), d.Slots())
	}
	st, err := d.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(st)
	if err != nil {
		t.Fatalf("Restore of alternating counts: %v", err)
	}
	if r.Progress() != d.Progress() || !slices.Equal(r.counts, d.counts) {
		t.Errorf("restored progress %+v counts %v, want %+v %v", r.Progress(), r.counts, d.Progress(), d.counts)
	}
}

// TestDecodeRunsCorrupt checks that decodeRuns reports corrupt run lists
// with an error naming the fault, never by writing past its table: a value
// byte with no run length after it, a run length cut off in the middle of
// its uvarint (0x80 announces a further byte), and a run that starts inside
// the table but ends past it (2 of 4 filled, then a run of 3).
func TestDecodeRunsCorrupt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  []byte
		want string
	}{
		{[]byte{1}, "truncated run length"},
		{[]byte{0, 2, 1, 0x80}, "truncated run length"},
		{[]byte{0, 2, 1, 3}, "run of 3 at index 2 overflows 4 comparisons"},
		{[]byte{0, 5}, "run of 5 at index 0 overflows 4 comparisons"},
	} {
		noPanic(t, fmt.Sprintf("decodeRuns(%v)", tc.raw), func() {
			err := decodeRuns(make([]uint8, 4), tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decodeRuns(%v) = %v, want an error containing %q", tc.raw, err, tc.want)
			}
		})
	}
	// The same through Restore: a stored state whose second run overflows.
	bad := `{"kind":"landmark","version":1,"n":4,"variant":"k1","landmarks":[0,2],"repeats":1,"answered":0,"counts":"` +
		base64.StdEncoding.EncodeToString(deflate([]byte{0, 2, 1, 3})) + `"}`
	noPanic(t, "Restore of an overflowing run", func() {
		if _, err := Restore([]byte(bad)); err == nil || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("Restore of an overflowing run: %v, want an overflow error", err)
		}
	})
}

// TestFeistelDomain checks that the permutation's domain is the least power
// of 4 that is at least the index space (and at least 4, the domain of one
// bit per half): Open and the cursor walk the whole domain at each level,
// so a domain one step too large would quadruple that walk. Expected values
// by hand: 2^(2h) with h = ceil(ceil(log2 size)/2), h >= 1.
func TestFeistelDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ size, domain uint64 }{
		{1, 4}, {2, 4}, {3, 4}, {4, 4}, {5, 16}, {8, 16}, {16, 16},
		{17, 64}, {64, 64}, {65, 256}, {256, 256}, {1 << 20, 1 << 20}, {1<<20 + 1, 1 << 22},
	} {
		if got := newFeistel(tc.size, 1, 0).domain(); got != tc.domain {
			t.Errorf("size %d: domain %d, want %d", tc.size, got, tc.domain)
		}
	}
}

// TestLevelsHaveTheirOwnOrder checks what newFeistel's comment promises:
// every answer level has its own tie order. With repeats 2, the order in
// which Open lists the comparisons wanting 2 answers (level 0) and, once
// each has one answer, the order in which it lists them wanting 1 (level 1)
// are different shuffles of the same (30-4)·C(4,2) + 4·C(3,2) = 168
// comparisons (k1, n = 30, |L| = 4).
func TestLevelsHaveTheirOwnOrder(t *testing.T) {
	t.Parallel()
	d, err := New(30, Config{Variant: K1, Landmarks: []int{3, 9, 17, 25}, Repeats: 2, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	keys := func() []triplet.Key {
		var ks []triplet.Key
		for _, nd := range d.Open(nil, 0) {
			ks = append(ks, nd.Key)
		}
		return ks
	}
	level0 := keys()
	for _, k := range level0 {
		d.Record(answer(k))
	}
	if p := d.Progress(); p.MinAnswers != 1 {
		t.Fatalf("after one answer each: progress %+v, want MinAnswers 1", p)
	}
	level1 := keys()
	if len(level0) != 168 || len(level1) != 168 {
		t.Fatalf("level 0 lists %d comparisons, level 1 %d, want 168 each", len(level0), len(level1))
	}
	if slices.Equal(level0, level1) {
		t.Error("levels 0 and 1 list the comparisons in the same order, want each level its own shuffle")
	}
	s0, s1 := slices.Clone(level0), slices.Clone(level1)
	byItems := func(a, b triplet.Key) int {
		return cmp.Or(cmp.Compare(a.Anchor, b.Anchor), cmp.Compare(a.J, b.J), cmp.Compare(a.K, b.K))
	}
	slices.SortFunc(s0, byItems)
	slices.SortFunc(s1, byItems)
	if !slices.Equal(s0, s1) {
		t.Error("levels 0 and 1 list different comparisons")
	}
}

// TestCursorOnNextOpen checks the cursor invariant stated on Design and
// advance: while the design is not done, no position of the level's
// permutation before the cursor holds a comparison with count == level, and
// the cursor itself stands on one (advance moves past the positions that do
// not, and stops at the first that does), so Open with a small limit starts
// its walk at the answer it returns. Checked after every answer of a small
// k2 design with repeats 2, answered in the order Open serves.
func TestCursorOnNextOpen(t *testing.T) {
	t.Parallel()
	d, err := New(9, Config{Variant: K2, Landmarks: []int{0, 4, 7}, Repeats: 2, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	isOpen := func(p uint64) bool {
		s := d.perm.at(p)
		if s >= uint64(d.slots) || int(d.counts[s]) != d.level {
			return false
		}
		_, ok := d.keyAt(int(s))
		return ok
	}
	for step := 0; !d.Done(); step++ {
		if d.cursor >= d.perm.domain() || !isOpen(d.cursor) {
			t.Fatalf("after %d answers: cursor %d does not stand on a comparison with %d answers", step, d.cursor, d.level)
		}
		for p := range d.cursor {
			if isOpen(p) {
				t.Fatalf("after %d answers: position %d before the cursor %d holds an open comparison", step, p, d.cursor)
			}
		}
		nd := d.Open(nil, 1)
		if want := int(d.perm.at(d.cursor)); len(nd) != 1 || func() int { i, _ := d.Index(nd[0].Key); return i }() != want {
			t.Fatalf("after %d answers: Open(1) = %v, want the comparison at the cursor (index %d)", step, nd, want)
		}
		d.Record(answer(nd[0].Key))
	}
}
