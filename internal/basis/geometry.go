package basis

import (
	"slices"

	"gonum.org/v1/gonum/mat"
)

// The geometry of Algorithm 1, computed from the rankings r_p[·] alone (no
// comparisons). With ranks distinct per head, "x is above q with respect to
// P" (section 2.1) means r_p[x] > r_p[q] for every p in P, and the convex
// hull estimate of eq. 4,
//
//	conv̂(P) = {x ∈ X : ∀q ∈ X, ∃p ∈ P, r_p[x] ≤ r_p[q]},
//
// is exactly the set of points above no other point: the minimal elements
// of the rank vectors (r_p[x])_{p∈P}.

// hull returns conv̂(P) (eq. 2-4), ordered by increasing distance from
// P[0]. Every p in P has been sorted for.
func (s *Scheme) hull(P []int) []int {
	r := make([][]int, len(P))
	for i, p := range P {
		r[i] = s.ranks[p]
	}
	// Scan in the order of P[0]: a point is in the hull unless an earlier
	// hull point lies below it in every other ranking (if any point lies
	// below it, a minimal one does, and that one comes earlier).
	var front []int
	for _, x := range s.orders[P[0]] {
		dominated := false
		for _, q := range front {
			if below(r[1:], q, x) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, x)
		}
	}
	return front
}

// below reports whether r[q] < r[x] in every ranking of r.
func below(r [][]int, q, x int) bool {
	for _, rp := range r {
		if rp[q] >= rp[x] {
			return false
		}
	}
	return true
}

// mostAbove returns the point above the largest number of points of
// conv̂(P) with respect to P, and that number (Algorithm 1, line 12). Ties
// go to the smaller item index.
func (s *Scheme) mostAbove(P []int) (best, count int) {
	h := s.hull(P)
	r := make([][]int, len(P))
	for i, p := range P {
		r[i] = s.ranks[p]
	}
	best, count = -1, 0
	for x := range s.n {
		c := 0
		for _, q := range h {
			if below(r, q, x) {
				c++
			}
		}
		if c > count {
			best, count = x, c
		}
	}
	return best, count
}

// affinelyDependent is the test of Algorithm 1, line 19: conv̂(P) equals
// the union of conv̂(P \ {z}) over z ∈ P (by Carathéodory's theorem, when P
// is affinely dependent every hull point lies in the hull of all but one).
// Each conv̂(P \ {z}) is a subset of conv̂(P), so it suffices to check that
// every point of conv̂(P) is covered.
func (s *Scheme) affinelyDependent(P []int) bool {
	covered := make([]bool, s.n)
	sub := make([]int, 0, len(P)-1)
	for z := range P {
		sub = sub[:0]
		for i, p := range P {
			if i != z {
				sub = append(sub, p)
			}
		}
		for _, x := range s.hull(sub) {
			covered[x] = true
		}
	}
	for _, x := range s.hull(P) {
		if !covered[x] {
			return false
		}
	}
	return true
}

// embed returns the n × d̂ coordinates by the rule of Config.Coordinates.
func (s *Scheme) embed() *mat.Dense { return s.coordinatesBy(s.cfg.Coordinates) }

// coordinatesBy returns the n × d̂ coordinates along the axes A_i, each
// with endpoints u (first) and v (last), by the given rule.
//
// CoordMedian (section 2.3): the coordinate of x is the median index in A_i
// of the axis points inside the lens with x as its apex, the points y with
// r_u[y] ≤ r_u[x] and r_v[y] ≤ r_v[x]. The lens always holds an axis point
// (x itself when x ∈ A_i); should it not, the index of the axis point with
// the smallest larger rank difference is used.
//
// CoordRankDifference: the coordinate of x is r_u[x] − r_v[x]. Since
// d(x,u)² − d(x,v)² = 2⟨x, v − u⟩ + ‖u‖² − ‖v‖² is affine in the
// projection of x onto the line uv, and each ranking is monotone in its
// distances, the difference of the two ranks orders the items roughly by
// their projections; it uses every item's two ranks instead of the few axis
// points in its lens.
func (s *Scheme) coordinatesBy(rule string) *mat.Dense {
	if len(s.axes) == 0 {
		return nil
	}
	x := mat.NewDense(s.n, len(s.axes), nil)
	idx := make([]int, 0, 16)
	for a, axis := range s.axes {
		ru, rv := s.ranks[axis[0]], s.ranks[axis[len(axis)-1]]
		if rule == CoordRankDifference {
			for i := range s.n {
				x.Set(i, a, float64(ru[i]-rv[i]))
			}
			continue
		}
		for i := range s.n {
			idx = idx[:0]
			for t, y := range axis {
				if ru[y] <= ru[i] && rv[y] <= rv[i] {
					idx = append(idx, t)
				}
			}
			x.Set(i, a, median(idx, axis, ru, rv, i))
		}
	}
	return x
}

// median returns the median of the sorted indices idx (the mean of the two
// middle ones for an even count); for an empty lens, the index of the axis
// point closest to i in the larger of the two rank differences.
func median(idx, axis, ru, rv []int, i int) float64 {
	if m := len(idx); m > 0 {
		if m%2 == 1 {
			return float64(idx[m/2])
		}
		return float64(idx[m/2-1]+idx[m/2]) / 2
	}
	best, bestD := 0, -1
	for t, y := range axis {
		d := max(abs(ru[y]-ru[i]), abs(rv[y]-rv[i]))
		if bestD < 0 || d < bestD {
			best, bestD = t, d
		}
	}
	return float64(best)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Coordinates returns the n × d̂ coordinates of section 2.3 (median index
// inside the lens along each axis). Before the basis is complete it
// returns the coordinates along the axes found so far (nil when there are
// none yet).
func (s *Scheme) Coordinates() *mat.Dense {
	if s.finished {
		if s.coords == nil {
			return nil
		}
		return mat.DenseCopyOf(s.coords)
	}
	return s.embed()
}

// Ranks returns the ranking r_h[·] of every item by distance from head h
// (h itself has rank 0) if the scheme has sorted for h, else nil.
func (s *Scheme) Ranks(h int) []int {
	return slices.Clone(s.ranks[h])
}
