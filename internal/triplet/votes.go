package triplet

import (
	"cmp"
	"slices"
)

// Key names one question without its answer: an anchor and an unordered
// pair of options, J < K.
type Key struct {
	Anchor, J, K int
}

// KeyOf returns the question that t answers.
func KeyOf(t Triplet) Key { return QuestionKey(t.Anchor, t.Closer, t.Farther) }

// QuestionKey returns the question about anchor and the options i and j,
// in either order: the one home of the canonical key (J < K).
func QuestionKey(anchor, i, j int) Key {
	if i < j {
		return Key{anchor, i, j}
	}
	return Key{anchor, j, i}
}

// Counts holds the two vote counts of one key: JCloser = #(a, j, k), the
// answers saying j is closer to a than k, and KCloser = #(a, k, j).
type Counts struct {
	JCloser, KCloser int
}

// Total returns the number of answers to the key.
func (c Counts) Total() int { return c.JCloser + c.KCloser }

// Contradicted reports whether both answers were given at least once.
func (c Counts) Contradicted() bool { return c.JCloser > 0 && c.KCloser > 0 }

// Votes is the vote table: for every anchor a and unordered pair {j, k} the
// counts #(a, j, k) and #(a, k, j). The kernels' contradiction-aware feature
// map (Kleindessner & von Luxburg 2017, section 2) reads exactly these.
type Votes struct {
	m map[Key]Counts
}

// NewVotes returns an empty vote table.
func NewVotes() *Votes { return &Votes{m: make(map[Key]Counts)} }

// VotesOf counts the triplets ts.
func VotesOf(ts []Triplet) *Votes {
	v := &Votes{m: make(map[Key]Counts, len(ts))}
	for _, t := range ts {
		v.Add(t)
	}
	return v
}

// Add counts one answer.
func (v *Votes) Add(t Triplet) {
	k := KeyOf(t)
	c := v.m[k]
	if t.Closer == k.J {
		c.JCloser++
	} else {
		c.KCloser++
	}
	v.m[k] = c
}

// Count returns #(a, j, k): how often j was said to be closer to a than k.
func (v *Votes) Count(a, j, k int) int {
	if j < k {
		return v.m[Key{a, j, k}].JCloser
	}
	return v.m[Key{a, k, j}].KCloser
}

// Get returns the counts of one key.
func (v *Votes) Get(k Key) Counts { return v.m[k] }

// Len returns the number of distinct keys answered at least once.
func (v *Votes) Len() int { return len(v.m) }

// Keys returns the answered keys in a fixed order (anchor, j, k).
func (v *Votes) Keys() []Key {
	keys := make([]Key, 0, len(v.m))
	for k := range v.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// Contradictions returns the keys with both counts above zero, in a fixed order.
func (v *Votes) Contradictions() []Key {
	var keys []Key
	for k, c := range v.m {
		if c.Contradicted() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// Majority returns one triplet per key, the answer given more often; ties
// are left out. Useful to de-noise repeated questions.
func (v *Votes) Majority() []Triplet {
	var ts []Triplet
	for _, k := range v.Keys() {
		c := v.m[k]
		switch {
		case c.JCloser > c.KCloser:
			ts = append(ts, Triplet{k.Anchor, k.J, k.K})
		case c.KCloser > c.JCloser:
			ts = append(ts, Triplet{k.Anchor, k.K, k.J})
		}
	}
	return ts
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Anchor, b.Anchor), cmp.Compare(a.J, b.J), cmp.Compare(a.K, b.K))
}
