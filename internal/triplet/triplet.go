// Package triplet is the shared vocabulary of closer: triplets, the vote
// table with its contradictions, CSV input and output, synthetic point sets
// and a noisy simulated oracle. It knows nothing of SQL or HTTP.
package triplet

import "fmt"

// Triplet is one answer: d(Anchor, Closer) < d(Anchor, Farther).
// Items are indices 0..n-1.
type Triplet struct {
	Anchor, Closer, Farther int
}

// Valid reports whether t names three distinct items in 0..n-1.
func (t Triplet) Valid(n int) error {
	if t.Anchor == t.Closer || t.Anchor == t.Farther || t.Closer == t.Farther {
		return fmt.Errorf("triplet (%d, %d, %d) repeats an item", t.Anchor, t.Closer, t.Farther)
	}
	for _, v := range [3]int{t.Anchor, t.Closer, t.Farther} {
		if v < 0 || v >= n {
			return fmt.Errorf("triplet (%d, %d, %d): item %d outside 0..%d", t.Anchor, t.Closer, t.Farther, v, n-1)
		}
	}
	return nil
}

// Flip returns the opposite answer to the same question.
func (t Triplet) Flip() Triplet { return Triplet{t.Anchor, t.Farther, t.Closer} }

// NumItems returns 1 + the largest index used in ts (0 for no triplets).
func NumItems(ts []Triplet) int {
	n := 0
	for _, t := range ts {
		n = max(n, t.Anchor+1, t.Closer+1, t.Farther+1)
	}
	return n
}
