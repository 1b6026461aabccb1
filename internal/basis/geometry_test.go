package basis

import (
	"math"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
)

// The geometry of Algorithm 1 checked against the definitions of section
// 2.1 and 2.3 computed from the true distances, without the rankings: with
// an error-free oracle and points in general position (continuous random
// draws, so no two distances tie) every ranking the scheme holds is the
// true order of distances, and "x above q with respect to P" is
// d(p, x) > d(p, q) for every p ∈ P.

// aboveByDist reports whether x is above q with respect to P.
func aboveByDist(x *mat.Dense, P []int, xi, q int) bool {
	for _, p := range P {
		if triplet.SqDist(x, p, xi) <= triplet.SqDist(x, p, q) {
			return false
		}
	}
	return true
}

// hullByDist is eq. 4: the points above no other point, ordered by
// distance from P[0].
func hullByDist(x *mat.Dense, P []int) []int {
	n, _ := x.Dims()
	var h []int
	for i := range n {
		in := true
		for q := range n {
			if q != i && aboveByDist(x, P, i, q) {
				in = false
				break
			}
		}
		if in {
			h = append(h, i)
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		return cmpFloat(triplet.SqDist(x, P[0], a), triplet.SqDist(x, P[0], b))
	})
	return h
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortedScheme returns a scheme over the rows of x that has sorted for
// every head (the true orders), as if every SortForHead had run.
func sortedScheme(x *mat.Dense) *Scheme {
	n, _ := x.Dims()
	s := newEmpty(n, Config{})
	for h := range n {
		s.setOrder(h, append([]int{h}, trueOrder(x, h)...))
	}
	return s
}

// TestHullAboveAndDependenceMatchTheDefinitions compares hull (eq. 2-4),
// mostAbove (line 12: the point above the most hull points, ties to the
// smaller index, and the count) and affinelyDependent (line 19: conv̂(P) is
// covered by the conv̂(P \ {z})) with direct computations from the
// distances, on random point sets of 40 points in 2 and 3 dimensions and
// random P of 2 to 4 points.
func TestHullAboveAndDependenceMatchTheDefinitions(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(31)
	dependent, independent, ties := 0, 0, 0
	for trial := range 40 {
		d := 2 + trial%2
		x := triplet.Gaussian(triplet.NewRand(uint64(100+trial)), 40, d, 1)
		s := sortedScheme(x)
		P := rng.Perm(40)[:2+trial%3]

		h := hullByDist(x, P)
		if got := s.hull(P); !slices.Equal(got, h) {
			t.Fatalf("trial %d, P %v: hull %v, by the definition %v", trial, P, got, h)
		}

		best, count := -1, 0
		counts := make([]int, 40)
		for xi := range 40 {
			for _, q := range h {
				if aboveByDist(x, P, xi, q) {
					counts[xi]++
				}
			}
			if counts[xi] > count {
				best, count = xi, counts[xi]
			}
		}
		for xi := best + 1; xi < 40; xi++ {
			if count > 0 && counts[xi] == count {
				ties++ // a later point with the same count: the smaller index must win
				break
			}
		}
		if b, c := s.mostAbove(P); c != count || (count > 0 && b != best) {
			t.Fatalf("trial %d, P %v: mostAbove = %d above %d, by the definition %d above %d", trial, P, b, c, best, count)
		}

		union := make(map[int]bool)
		for z := range P {
			sub := slices.Delete(slices.Clone(P), z, z+1)
			for _, i := range hullByDist(x, sub) {
				union[i] = true
			}
		}
		want := true
		for _, i := range h {
			if !union[i] {
				want = false
			}
		}
		if want {
			dependent++
		} else {
			independent++
		}
		if got := s.affinelyDependent(P); got != want {
			t.Fatalf("trial %d, P %v: affinelyDependent %v, by the definition %v", trial, P, got, want)
		}
	}
	// The cases must occur, or the comparisons above prove little.
	if dependent == 0 || independent == 0 || ties == 0 {
		t.Fatalf("%d dependent, %d independent P, %d ties for the most above: a case never occurred", dependent, independent, ties)
	}
}

// TestMedianCoordinatesMatchTheLens computes the coordinates of section 2.3
// from the distances: every axis is conv̂ of its two endpoints u and v
// ordered by distance from u, and the coordinate of x along it is the
// median index of the axis points y with d(u,y) ≤ d(u,x) and d(v,y) ≤ d(v,x)
// (the mean of the two middle indices for an even count); both parities
// occur.
func TestMedianCoordinatesMatchTheLens(t *testing.T) {
	t.Parallel()
	const n = 200
	x := triplet.Gaussian(triplet.NewRand(21), n, 3, 1)
	s := New(n, Config{Seed: 21})
	Run(s, triplet.NewOracle(x, 0, 21), 0, 0)
	c := s.Coordinates()
	if s.DHat() < 2 {
		t.Fatalf("d̂ = %d", s.DHat())
	}
	even := 0
	for a, axis := range s.Axes() {
		u, v := axis[0], axis[len(axis)-1]
		if want := hullByDist(x, []int{u, v}); !slices.Equal(axis, want) {
			t.Fatalf("axis %d is not conv̂ of its endpoints %d, %d: %v, want %v", a, u, v, axis, want)
		}
		onAxis := make(map[int]bool)
		for _, y := range axis {
			onAxis[y] = true
		}
		for i := range n {
			var lens []int
			for k, y := range axis {
				if triplet.SqDist(x, u, y) <= triplet.SqDist(x, u, i) && triplet.SqDist(x, v, y) <= triplet.SqDist(x, v, i) {
					lens = append(lens, k)
				}
			}
			if len(lens) == 0 {
				t.Fatalf("item %d: empty lens on axis %d", i, a)
			}
			m := len(lens)
			want := float64(lens[m/2])
			if m%2 == 0 {
				even++
				want = float64(lens[m/2-1]+lens[m/2]) / 2
			}
			if onAxis[i] && m != 1 {
				// an axis point is above no point (it is in conv̂), so no
				// other axis point is in its lens
				t.Fatalf("item %d on axis %d: lens %v", i, a, lens)
			}
			if got := c.At(i, a); got != want {
				t.Fatalf("item %d axis %d: coordinate %v, want the median %v of lens %v", i, a, got, want, lens)
			}
		}
	}
	if even == 0 {
		t.Fatal("no lens with an even count: the mean of the two middle indices was never checked")
	}
}

// TestCircleStopsAfterOneAxis: on a circle, for the two ends p1, p2 of a
// diameter d(x,p1)² + d(x,p2)² = |p1p2|² (Thales), so no point is farther
// from both ends than another; no point is above any other, and Algorithm
// 1 stops at line 13 with d̂ = 1 after sorting for p1 and p2 only (the
// paper's Table 1 gives d̂ = 1.00 for the circle, "sphere" d = 2). The 64
// points are 32 random angles and their antipodes, so whatever p1 the
// tournament finds, its antipode is in the set and is the apex p2.
func TestCircleStopsAfterOneAxis(t *testing.T) {
	t.Parallel()
	const n = 64
	rng := triplet.NewRand(17)
	x := mat.NewDense(n, 2, nil)
	for i := range n / 2 {
		a := math.Pi * rng.Float64()
		x.Set(i, 0, math.Cos(a))
		x.Set(i, 1, math.Sin(a))
		x.Set(i+n/2, 0, -math.Cos(a))
		x.Set(i+n/2, 1, -math.Sin(a))
	}
	s := New(n, Config{Seed: 17})
	Run(s, triplet.NewOracle(x, 0, 17), 0, 0)
	if s.DHat() != 1 || len(s.ends) != 2 || s.ends[1] != (s.ends[0]+n/2)%n {
		t.Fatalf("d̂ = %d, endpoints %v; want one axis between antipodes", s.DHat(), s.ends)
	}
	if s.sorts != 2 || len(s.ranks) != 2 {
		t.Fatalf("%d sorts for %d heads, want 2 (p1 and p2, no candidate)", s.sorts, len(s.ranks))
	}
	if h := s.hull(s.ends); len(h) != n {
		t.Fatalf("conv̂ of a diameter holds %d of the %d points", len(h), n)
	}
}

// TestNextAxisStopsWhenTheLensHoldsOnlyTheNewEndpoint: Algorithm 1, lines
// 7-9: the apex opposite a new endpoint p_i is the point of the lens of
// the earlier endpoints (closer to each of them than p_i) farthest from
// p_i; when the lens holds p_i alone there is no apex and the basis is
// complete. Points on a line at 0, 0.1, 2, 5, 10 (items 0..4) with
// endpoints 0 and 4 and then item 1: every other point is farther from
// item 0 than item 1 is, and item 0 is farther from item 4 than item 1
// is, so the lens of item 1 is {1}. (A run rarely reaches this branch:
// the candidate is above some hull point, which then lies in its lens
// unless a later apex excludes it; so the state is set up by hand, with
// every head sorted by the true distances.)
func TestNextAxisStopsWhenTheLensHoldsOnlyTheNewEndpoint(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(5, 1, []float64{0, 0.1, 2, 5, 10})
	s := sortedScheme(x)
	s.phase = PhaseSort
	s.ends = []int{0, 4}
	s.axes = [][]int{s.hull([]int{0, 4})}
	s.ends = append(s.ends, 1)
	s.nextAxis()
	if !s.finished || !s.Done() || len(s.ends) != 3 || s.DHat() != 1 {
		t.Fatalf("finished %v, done %v, endpoints %v, d̂ %d; want the basis complete with the one axis", s.finished, s.Done(), s.ends, s.DHat())
	}

	// In the plane, with endpoints (0,0) and (10,0) and then (5,5) (items
	// 0, 1, 2): the lens of item 2 is the points within √50 ≈ 7.07 of both
	// earlier endpoints, here (5,1) and (5,0) and item 2 itself but not
	// (1,8) (8.06 from (0,0)); the apex is the lens point farthest from
	// (5,5): (5,0), item 4.
	y := mat.NewDense(6, 2, []float64{0, 0, 10, 0, 5, 5, 5, 1, 5, 0, 1, 8})
	s = sortedScheme(y)
	s.phase = PhaseSort
	s.ends = []int{0, 1, 2}
	s.axes = [][]int{s.hull([]int{0, 1})}
	s.nextAxis()
	if s.finished || !slices.Equal(s.ends, []int{0, 1, 2, 4}) {
		t.Fatalf("finished %v, endpoints %v; want the apex 4 appended", s.finished, s.ends)
	}
}
