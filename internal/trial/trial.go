// Package trial is the vocabulary of the question formats beyond the
// triplet (issue 27): odd-one-out trials (three items, the one least like
// the other two) and ranked k-of-n trials (a query, n references, k of
// them chosen in order of similarity); the checks an answer must pass;
// the triplets each trial implies, for everything that works on
// triplets; and their CSV files. It knows nothing of SQL or HTTP.
package trial

import (
	"fmt"

	"github.com/closer-lab/closer/internal/triplet"
)

// OddOneOut is an answered odd-one-out trial: Items in display order (item
// indices 0..n-1) and Odd, the item chosen as least like the other two
// (one of Items).
type OddOneOut struct {
	Items [3]int
	Odd   int
}

// Pair returns the two items judged alike, in display order.
func (t OddOneOut) Pair() (i, j int) {
	switch t.Odd {
	case t.Items[0]:
		return t.Items[1], t.Items[2]
	case t.Items[1]:
		return t.Items[0], t.Items[2]
	}
	return t.Items[0], t.Items[1]
}

// Validate reports whether t shows three distinct items in 0..n-1 and its
// odd one is one of them.
func (t OddOneOut) Validate(n int) error {
	a, b, c := t.Items[0], t.Items[1], t.Items[2]
	if a == b || a == c || b == c {
		return fmt.Errorf("odd-one-out (%d, %d, %d) repeats an item", a, b, c)
	}
	for _, v := range t.Items {
		if v < 0 || v >= n {
			return fmt.Errorf("odd-one-out (%d, %d, %d): item %d outside 0..%d", a, b, c, v, n-1)
		}
	}
	if t.Odd != a && t.Odd != b && t.Odd != c {
		return fmt.Errorf("odd-one-out (%d, %d, %d): odd %d is not one of the items shown", a, b, c, t.Odd)
	}
	return nil
}

// Triplets appends to dst the two triplets t implies, in closer's order
// (anchor, closer, farther): with i, j the pair judged alike (display
// order), (i, j, odd) and (j, i, odd) — each of the pair is closer to the
// other than to the odd one. These are the rows of cblearn's
// triplets_from_oddoneout for three items (cblearn/preprocessing/_query.py:
// (n_choices − 1)(n_choices − 2) = 2 triplets per trial, the ordered
// pairs of the non-odd items, then the odd one).
func (t OddOneOut) Triplets(dst []triplet.Triplet) []triplet.Triplet {
	i, j := t.Pair()
	return append(dst, triplet.Triplet{Anchor: i, Closer: j, Farther: t.Odd}, triplet.Triplet{Anchor: j, Closer: i, Farther: t.Odd})
}

// Rank is an answered rank trial: the Query, the Options (references) in
// display order and the Choices (items among the Options) in the order
// chosen, the most similar to the query first.
type Rank struct {
	Query   int
	Options []int
	Choices []int
}

// Spec returns t's size: N options, K choices.
func (t Rank) Spec() RankSpec { return RankSpec{N: len(t.Options), K: len(t.Choices)} }

// Validate reports whether t fits spec and is a well-formed answer: the
// query and options are distinct items in 0..n-1, and the choices are K
// distinct options (CheckRank's reasons).
func (t Rank) Validate(n int, spec RankSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if len(t.Options) != spec.N {
		return fmt.Errorf("rank trial shows %d references, want %d", len(t.Options), spec.N)
	}
	if err := checkShown(n, t.Query, t.Options); err != nil {
		return err
	}
	return CheckRank(t.Options, spec.K, t.Choices)
}

// checkShown reports whether the query and the options are distinct items
// in 0..n-1.
func checkShown(n, query int, options []int) error {
	if query < 0 || query >= n {
		return fmt.Errorf("rank trial: query %d outside 0..%d", query, n-1)
	}
	for k, o := range options {
		if o < 0 || o >= n {
			return fmt.Errorf("rank trial: reference %d outside 0..%d", o, n-1)
		}
		if o == query {
			return fmt.Errorf("rank trial: the query %d is also a reference", o)
		}
		for _, p := range options[:k] {
			if p == o {
				return fmt.Errorf("rank trial: reference %d shown twice", o)
			}
		}
	}
	return nil
}

// Ordered stores in dst (len(t.Options), or nil to allocate) the options
// in the order the answer ranks them: the choices in the order chosen,
// then the options not chosen in display order. It is the order of psiz's
// rank outcomes (the selected references first).
func (t Rank) Ordered(dst []int) []int {
	if dst == nil {
		dst = make([]int, len(t.Options))
	}
	if len(dst) != len(t.Options) {
		panic("trial: Ordered: destination length mismatch")
	}
	copy(dst, t.Choices)
	k := len(t.Choices)
	for _, o := range t.Options {
		chosen := false
		for _, c := range t.Choices {
			if c == o {
				chosen = true
				break
			}
		}
		if !chosen {
			dst[k] = o
			k++
		}
	}
	return dst
}

// Triplets appends to dst the triplets t implies: for each choice, in the
// order chosen, (query, choice, other) for every option ranked below it —
// the later choices, then the options not chosen in display order. A
// k-of-n trial gives Σ_{r=1..k} (n − r) = k·n − k(k+1)/2 triplets (13 for
// 8-choose-2), the rows and order of cblearn's triplets_from_multiselect
// with is_ranked=True (cblearn/preprocessing/_query.py).
func (t Rank) Triplets(dst []triplet.Triplet) []triplet.Triplet {
	ord := t.Ordered(nil)
	for r := range t.Choices {
		for _, o := range ord[r+1:] {
			dst = append(dst, triplet.Triplet{Anchor: t.Query, Closer: ord[r], Farther: o})
		}
	}
	return dst
}

// DerivedPerRank is the number of triplets one rank trial of size s
// implies: k·n − k(k+1)/2.
func DerivedPerRank(s RankSpec) int { return s.K*s.N - s.K*(s.K+1)/2 }

// OddTriplets returns the triplets of every odd-one-out trial, two a trial
// in trial order.
func OddTriplets(ts []OddOneOut) []triplet.Triplet {
	out := make([]triplet.Triplet, 0, 2*len(ts))
	for _, t := range ts {
		out = t.Triplets(out)
	}
	return out
}

// RankTriplets returns the triplets of every rank trial, in trial order.
func RankTriplets(ts []Rank) []triplet.Triplet {
	var out []triplet.Triplet
	if len(ts) > 0 {
		out = make([]triplet.Triplet, 0, len(ts)*DerivedPerRank(ts[0].Spec()))
	}
	for _, t := range ts {
		out = t.Triplets(out)
	}
	return out
}
