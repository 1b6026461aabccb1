package basis

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// expectedQuicksort against the recurrence of randomised quicksort, an
// independent way to the same numbers: a partition of m items costs m − 1
// comparisons against a uniformly random pivot of rank k, then the two
// sides: C(m) = m − 1 + (1/m) Σ_{k=0}^{m−1} (C(k) + C(m−1−k)), C(0) = C(1)
// = 0. Small values by hand: C(2) = 1, C(3) = 2 + (2/3)(0 + 0 + 1) = 8/3,
// C(4) = 3 + (2/4)(0 + 0 + 1 + 8/3) = 29/6.
func TestExpectedQuicksortRecurrence(t *testing.T) {
	t.Parallel()
	c := []float64{0, 0}
	for m := 2; m <= 60; m++ {
		s := 0.0
		for k := range m {
			s += c[k] + c[m-1-k]
		}
		c = append(c, float64(m-1)+s/float64(m))
	}
	for m, want := range map[int]float64{2: 1, 3: 8.0 / 3, 4: 29.0 / 6} {
		if math.Abs(c[m]-want) > 1e-12 {
			t.Fatalf("recurrence C(%d) = %v, by hand %v", m, c[m], want)
		}
	}
	for m := range c {
		if got := expectedQuicksort(m); math.Abs(got-c[m]) > 1e-9 {
			t.Errorf("expectedQuicksort(%d) = %v, recurrence %v", m, got, c[m])
		}
	}
}

// roundedQuicksort holds round(C(m)) for m = 0..10 by hand:
// C(5) = 12·H5 − 20 = 12·137/60 − 20 = 7.4, C(6) = 14·49/20 − 24 = 10.3,
// C(7) = 16·363/140 − 28 ≈ 13.49, C(8) = 18·761/280 − 32 ≈ 16.92,
// C(9) = 20·7129/2520 − 36 ≈ 20.58, C(10) = 22·7381/2520 − 40 ≈ 24.44.
var roundedQuicksort = []int{0, 0, 1, 3, 5, 7, 10, 13, 17, 21, 24}

// TestProgressSortTotals follows the first sort of an 11-item scheme
// answer by answer and checks the comparisons Progress reports as decided
// and expected in all (SortDone, SortTotal) by hand: the first partition
// sorts the 10 items other than the head, comparing the 9 others with a
// pivot, so while it runs the total is round(C(10)) = 24 and the decided
// count grows by one per answer; once it is split into a items closer to
// the head than the pivot and 9 − a farther ones, the total is
// 9 + round(C(a)) + round(C(9 − a)).
func TestProgressSortTotals(t *testing.T) {
	t.Parallel()
	const n = 11
	x := triplet.Gaussian(triplet.NewRand(5), n, 2, 1)
	o := triplet.NewOracle(x, 0, 5)
	s := New(n, Config{Seed: 5})
	for s.Progress().Phase == PhaseFarthest {
		nd := s.Open(nil, 1)[0]
		s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
	}
	open := s.Open(nil, 0)
	if len(open) != n-2 {
		t.Fatalf("first partition: %d comparisons open, want %d", len(open), n-2)
	}
	// The pivot is the item in every open comparison, the head their anchor.
	head := open[0].Key.Anchor
	count := make(map[int]int)
	for _, nd := range open {
		count[nd.Key.J]++
		count[nd.Key.K]++
	}
	pivot := -1
	for i, c := range count {
		if c == n-2 {
			pivot = i
		}
	}
	if pivot < 0 {
		t.Fatalf("no item common to the open comparisons %v", open)
	}
	for k, nd := range open {
		p := s.Progress()
		if p.SortDone != k || p.SortTotal != roundedQuicksort[10] {
			t.Fatalf("after %d answers of the first partition: done %d of %d, want %d of %d", k, p.SortDone, p.SortTotal, k, roundedQuicksort[10])
		}
		s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
	}
	a := 0
	for i := range n {
		if i != head && i != pivot && triplet.SqDist(x, head, i) < triplet.SqDist(x, head, pivot) {
			a++
		}
	}
	want := n - 2 + roundedQuicksort[a] + roundedQuicksort[n-2-a]
	if p := s.Progress(); p.SortDone != n-2 || p.SortTotal != want {
		t.Fatalf("after the first partition (%d closer than the pivot, %d farther): done %d of %d, want %d of %d",
			a, n-2-a, p.SortDone, p.SortTotal, n-2, want)
	}
	if a < 2 || n-2-a < 2 {
		t.Fatalf("a side of %d or %d items: a segment starting past 0 with two or more items was not checked", a, n-2-a)
	}
}

// TestProgressSteps checks the words of Progress.Step in the basis phase
// against what is open: while a sort runs, every open comparison has its
// head as anchor, and the step names that head and the axis being built
// (the axes found so far plus one).
func TestProgressSteps(t *testing.T) {
	t.Parallel()
	const n = 200
	x := triplet.Gaussian(triplet.NewRand(21), n, 3, 1)
	o := triplet.NewOracle(x, 0, 21)
	s := New(n, Config{Seed: 21})
	seen := make(map[string]bool)
	for !s.Done() {
		open := s.Open(nil, 0)
		p := s.Progress()
		if p.Phase == PhaseSort {
			head := open[0].Key.Anchor
			var want []string
			switch {
			case strings.HasPrefix(p.Step, "sorting for endpoint 1"):
				want = []string{fmt.Sprintf("sorting for endpoint 1 (item %d)", head), "first"}
			case strings.HasPrefix(p.Step, "sorting for the apex"):
				want = []string{fmt.Sprintf("sorting for the apex closing axis %d (item %d)", p.Axes+1, head), "apex"}
			default:
				want = []string{fmt.Sprintf("sorting for the candidate of axis %d (item %d)", p.Axes+1, head), "cand"}
			}
			if p.Step != want[0] {
				t.Fatalf("step %q, want %q", p.Step, want[0])
			}
			seen[want[1]] = true
		}
		for _, nd := range open {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
	}
	if !seen["first"] || !seen["apex"] || !seen["cand"] || s.DHat() < 2 {
		t.Fatalf("stages seen %v, d̂ %d: a step was never checked", seen, s.DHat())
	}
	if p := s.Progress(); p.Step != fmt.Sprintf("done: d̂ = %d", s.DHat()) {
		t.Errorf("final step %q", p.Step)
	}
}
