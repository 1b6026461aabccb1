package kernel

import (
	"fmt"
	"slices"
)

// A partial ranking is given as the list of its observed items, best first:
// []int{i1, i2, ..., ik} means x_{i1} ≻ x_{i2} ≻ … ≻ x_{ik} over the items
// 0..n-1 (Jiao & Vert 2016, section 3).

// InterleavingKernel returns the Kendall kernel between two interleaving
// partial rankings (eq. 5) as the convolution kernel of eq. 7: the mean of
// K_τ over all pairs of total rankings compatible with a and with b. It is
// computed with Algorithm 3 in O(k log k + m log m). It returns an error if
// an item is outside 0..n-1 or repeated, or n < 2.
func InterleavingKernel(n int, a, b []int) (float64, error) {
	p, err := newPartialPair(n, a, b)
	if err != nil {
		return 0, fmt.Errorf("kernel: interleaving kernel: %w", err)
	}
	k, m, c := float64(p.k), float64(p.m), float64(len(p.common))
	n2 := float64(n) * float64(n-1) / 2
	s1 := p.s1(n2)
	var s2, s3, s4, s5 float64
	// Step 5: pairs with one item in I∩J and the other in I\J.
	if len(p.common) >= 1 && p.k > len(p.common) {
		for _, e := range p.common {
			s2 += (2*float64(e.sb) - m - 1) * (2*float64(e.sa-e.ta) - k + c)
		}
		s2 /= n2 * (m + 1)
	}
	// Step 6: one item in I∩J, the other in J\I.
	if len(p.common) >= 1 && p.m > len(p.common) {
		for _, e := range p.common {
			s3 += (2*float64(e.sa) - k - 1) * (2*float64(e.sb-e.tb) - m + c)
		}
		s3 /= n2 * (k + 1)
	}
	// Step 7: one item in I∩J, the other in neither.
	if len(p.common) >= 1 && p.rest >= 1 {
		for _, e := range p.common {
			s4 += (2*float64(e.sa) - k - 1) * (2*float64(e.sb) - m - 1)
		}
		s4 *= float64(p.rest) / (n2 * (k + 1) * (m + 1))
	}
	// Step 8: one item in I\J, the other in J\I.
	if len(p.onlyA) >= 1 && len(p.onlyB) >= 1 {
		var sa, sb float64
		for _, s := range p.onlyA {
			sa += 2*float64(s) - k - 1
		}
		for _, s := range p.onlyB {
			sb += 2*float64(s) - m - 1
		}
		s5 = -sa * sb / (n2 * (k + 1) * (m + 1))
	}
	return s1 + s2 + s3 + s4 + s5, nil
}

// TopKKernel returns the Kendall kernel between a top-k and a top-m partial
// ranking (eq. 6: the listed items, in order, above all the others) as the
// convolution kernel of eq. 7, computed with Algorithm 4 in
// O(k log k + m log m). It returns an error if an item is outside 0..n-1 or
// repeated, or n < 2.
func TopKKernel(n int, a, b []int) (float64, error) {
	p, err := newPartialPair(n, a, b)
	if err != nil {
		return 0, fmt.Errorf("kernel: top-k kernel: %w", err)
	}
	k, m, c := float64(p.k), float64(p.m), float64(len(p.common))
	n2 := float64(n) * float64(n-1) / 2
	s1 := p.s1(n2)
	var s2, s3, s4, s5 float64
	if len(p.common) >= 1 && p.k > len(p.common) {
		for _, e := range p.common {
			s2 += 2*float64(e.sa-e.ta) - k + c
		}
		s2 /= n2
	}
	if len(p.common) >= 1 && p.m > len(p.common) {
		for _, e := range p.common {
			s3 += 2*float64(e.sb-e.tb) - m + c
		}
		s3 /= n2
	}
	if len(p.common) >= 1 && p.rest >= 1 {
		s4 = c * float64(p.rest) / n2
	}
	if len(p.onlyA) >= 1 && len(p.onlyB) >= 1 {
		s5 = -float64(len(p.onlyA)) * float64(len(p.onlyB)) / n2
	}
	return s1 + s2 + s3 + s4 + s5, nil
}

// commonItem holds, for an item of I∩J, its ranks σ(i), σ'(i) among the k
// and m observed items (higher is better, as in the paper) and τ(i), τ'(i)
// among the common items.
type commonItem struct {
	sa, sb, ta, tb int
}

// partialPair is steps 1-2 of Algorithms 3 and 4.
type partialPair struct {
	k, m   int
	common []commonItem
	onlyA  []int // σ(i) for i ∈ I\J
	onlyB  []int // σ'(j) for j ∈ J\I
	rest   int   // |(I∪J)^c|
}

func newPartialPair(n int, a, b []int) (*partialPair, error) {
	if n < 2 {
		return nil, fmt.Errorf("%d items, need at least 2", n)
	}
	// rank[i] = σ(i) (1..k, k = best) or 0 if i is unobserved. Sorting is
	// implicit: the lists are already in rank order, so this step is O(k+m)
	// plus the O(c log c) Kendall count below.
	ra, err := ranks(n, a)
	if err != nil {
		return nil, fmt.Errorf("first ranking: %w", err)
	}
	rb, err := ranks(n, b)
	if err != nil {
		return nil, fmt.Errorf("second ranking: %w", err)
	}
	p := &partialPair{k: len(a), m: len(b)}
	// τ(i): rank among the common items in the order of a, low to high.
	for idx := len(a) - 1; idx >= 0; idx-- {
		i := a[idx]
		if rb[i] > 0 {
			p.common = append(p.common, commonItem{sa: ra[i], sb: rb[i], ta: len(p.common) + 1})
		} else {
			p.onlyA = append(p.onlyA, ra[i])
		}
	}
	// τ'(i): rank of sb among the common items.
	order := make([]int, len(p.common))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return p.common[x].sb - p.common[y].sb })
	for r, i := range order {
		p.common[i].tb = r + 1
	}
	for _, j := range b {
		if ra[j] == 0 {
			p.onlyB = append(p.onlyB, rb[j])
		}
	}
	p.rest = n - p.k - p.m + len(p.common)
	return p, nil
}

// s1 is step 4: C(|I∩J|, 2)/C(n, 2) · K_τ(τ, τ') = (n_c − n_d)/C(n, 2)
// over the pairs of common items, counted in O(c log c).
func (p *partialPair) s1(n2 float64) float64 {
	c := len(p.common)
	if c < 2 {
		return 0
	}
	x := make([]float64, c)
	y := make([]float64, c)
	for i, e := range p.common {
		x[i], y[i] = float64(e.ta), float64(e.tb)
	}
	cnt := kendallCounts(x, y)
	return float64(cnt.nc-cnt.nd) / n2
}

// ranks returns σ as an n-slice: the first listed item gets rank k, the
// last rank 1, unlisted items 0.
func ranks(n int, list []int) ([]int, error) {
	r := make([]int, n)
	for idx, i := range list {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("item %d outside 0..%d", i, n-1)
		}
		if r[i] != 0 {
			return nil, fmt.Errorf("item %d listed twice", i)
		}
		r[i] = len(list) - idx
	}
	return r, nil
}
