// Package landmark implements the landmark designs of Kleindessner & von
// Luxburg (2017), section 2.3, as pure state machines (design.Design), and
// the random design that the simulator and the store treat the same way.
//
// A landmark design fixes a small set L of landmark items and asks only
// comparisons that involve them, so that pairs of answers share options
// (k1) or anchors (k2) and the kernels of section 2 get many informative
// products:
//
//   - k1: d(x, l_j) < d(x, l_k)? for every item x and every unordered pair of
//     landmarks {l_j, l_k} not containing x: anchor x, options l_j and l_k.
//   - k2: d(l_j, x) < d(l_j, l_k)? for every landmark l_j, every item x and
//     every landmark l_k, with x, l_j, l_k distinct: anchor l_j, options x and
//     l_k. When x is itself a landmark, (l_j; x, l_k) and (l_j; l_k, x) are
//     the same question and counted once.
//
// For n items and |L| landmarks that is (n−|L|)·C(|L|,2) + |L|·C(|L|−1,2)
// comparisons for k1 (4,349,130 for n = 10,000 and |L| = 30) and
// (n−|L|)·|L|(|L|−1) + |L|·C(|L|−1,2) for k2 (section 2.4 expects
// |S| ∈ O(|L|² n)). Each comparison is wanted Repeats times.
//
// Comparisons are indexed by an integer; the state is one byte of answer
// count per index and a histogram of counts, so n = 10,000 with 30
// landmarks takes a few megabytes. Open serves the least-answered
// comparisons first; ties are served in a seeded pseudo-random order (a
// Feistel permutation of the index space, one per answer level), so
// coverage grows evenly and Open with a small limit is cheap.
package landmark

import (
	"fmt"
	"slices"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Variant selects which comparisons a landmark design asks.
type Variant int

const (
	// K1 asks (anchor x; options l_j, l_k), for the kernel k1 (eq. 2-3).
	K1 Variant = 1
	// K2 asks (anchor l_j; options x, l_k), for the kernel k2 (eq. 5).
	K2 Variant = 2
)

// String returns "k1" or "k2".
func (v Variant) String() string {
	switch v {
	case K1:
		return "k1"
	case K2:
		return "k2"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// ParseVariant reads "k1" or "k2".
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "k1":
		return K1, nil
	case "k2":
		return K2, nil
	}
	return 0, fmt.Errorf("landmark: unknown variant %q (want k1 or k2)", s)
}

// MaxRepeats is the largest Repeats a design accepts (counts are bytes).
const MaxRepeats = 255

// maxSlots bounds the comparison index space (n·C(|L|,2) for k1,
// n·|L|(|L|−1) for k2) so that the count table stays allocatable.
const maxSlots = 1 << 32

// Config configures a landmark design.
type Config struct {
	// Variant is K1 or K2.
	Variant Variant
	// Landmarks are the landmark items (indices 0..n-1) picked by the
	// researcher. When empty, NumLandmarks items are drawn at random with Seed.
	Landmarks []int
	// NumLandmarks is the number of landmarks to draw when Landmarks is
	// empty. With Landmarks given it must be 0 or len(Landmarks).
	NumLandmarks int
	// Repeats is how many answers each comparison wants (default 1).
	Repeats int
	// Seed fixes the random landmarks and the order of ties.
	Seed uint64
}

// Design is a landmark design. It is not safe for concurrent use; the
// store serialises access (one transaction per answer) and the simulator
// drives it from one goroutine.
type Design struct {
	n       int
	variant Variant
	lm      []int   // landmark items, sorted ascending
	pos     []int32 // item -> position in lm, or -1
	pairs   [][2]int32
	repeats int
	seed    uint64

	slots  int     // size of the comparison index space (some indices unused)
	size   int     // number of distinct comparisons
	counts []uint8 // answers recorded per index, at most repeats

	hist     []int // hist[c] = comparisons with c answers, c = 0..repeats
	answered int   // sum of counts

	// level is the least answer count of any comparison (repeats when
	// done); cursor is a position in the level's permutation before which
	// no comparison has count == level.
	level  int
	cursor uint64
	perm   feistel
}

var _ design.Design = (*Design)(nil)

// New returns a landmark design over n items with no answers recorded.
func New(n int, cfg Config) (*Design, error) {
	d, err := newEmpty(n, cfg)
	if err != nil {
		return nil, err
	}
	d.hist[0] = d.size
	d.resetLevel()
	return d, nil
}

// newEmpty validates cfg and builds the design with all counts zero and an
// empty histogram (the caller fills it).
func newEmpty(n int, cfg Config) (*Design, error) {
	if n < 3 {
		return nil, fmt.Errorf("landmark: need at least 3 items, have %d", n)
	}
	if cfg.Variant != K1 && cfg.Variant != K2 {
		return nil, fmt.Errorf("landmark: unknown variant %d (want K1 or K2)", int(cfg.Variant))
	}
	repeats := cfg.Repeats
	if repeats == 0 {
		repeats = 1
	}
	if repeats < 1 || repeats > MaxRepeats {
		return nil, fmt.Errorf("landmark: repeats %d outside 1..%d", cfg.Repeats, MaxRepeats)
	}
	lm, err := chooseLandmarks(n, cfg)
	if err != nil {
		return nil, err
	}
	L := len(lm)
	d := &Design{n: n, variant: cfg.Variant, lm: lm, repeats: repeats, seed: cfg.Seed}
	d.pos = make([]int32, n)
	for i := range d.pos {
		d.pos[i] = -1
	}
	for p, item := range lm {
		d.pos[item] = int32(p)
	}
	var block int // comparisons per item x in the index space
	switch cfg.Variant {
	case K1:
		d.pairs = make([][2]int32, 0, L*(L-1)/2)
		for a := range L {
			for b := a + 1; b < L; b++ {
				d.pairs = append(d.pairs, [2]int32{int32(a), int32(b)})
			}
		}
		block = len(d.pairs)
		d.size = (n-L)*(L*(L-1)/2) + L*((L-1)*(L-2)/2)
	case K2:
		block = L * (L - 1)
		d.size = (n-L)*L*(L-1) + L*((L-1)*(L-2)/2)
	}
	if uint64(n)*uint64(block) > maxSlots {
		return nil, fmt.Errorf("landmark: %d items × %d landmark pairs is too large a design", n, block)
	}
	d.slots = n * block
	d.counts = make([]uint8, d.slots)
	d.hist = make([]int, repeats+1)
	return d, nil
}

func chooseLandmarks(n int, cfg Config) ([]int, error) {
	if len(cfg.Landmarks) > 0 {
		if cfg.NumLandmarks != 0 && cfg.NumLandmarks != len(cfg.Landmarks) {
			return nil, fmt.Errorf("landmark: %d landmarks given but NumLandmarks is %d", len(cfg.Landmarks), cfg.NumLandmarks)
		}
		lm := slices.Clone(cfg.Landmarks)
		slices.Sort(lm)
		for i, item := range lm {
			if item < 0 || item >= n {
				return nil, fmt.Errorf("landmark: landmark %d outside items 0..%d", item, n-1)
			}
			if i > 0 && lm[i-1] == item {
				return nil, fmt.Errorf("landmark: landmark %d given twice", item)
			}
		}
		if len(lm) < 2 {
			return nil, fmt.Errorf("landmark: need at least 2 landmarks, have %d", len(lm))
		}
		return lm, nil
	}
	L := cfg.NumLandmarks
	if L < 2 || L > n {
		return nil, fmt.Errorf("landmark: number of landmarks %d outside 2..%d", L, n)
	}
	lm := triplet.NewRand(triplet.Mix64(cfg.Seed ^ 0x6c6d)).Perm(n)[:L]
	slices.Sort(lm)
	return lm, nil
}

// N returns the number of items.
func (d *Design) N() int { return d.n }

// Variant returns K1 or K2.
func (d *Design) Variant() Variant { return d.variant }

// Landmarks returns the landmark items, ascending. The caller must not
// modify the slice.
func (d *Design) Landmarks() []int { return d.lm }

// Repeats returns how many answers each comparison wants.
func (d *Design) Repeats() int { return d.repeats }

// Comparisons returns the number of distinct comparisons of the design.
func (d *Design) Comparisons() int { return d.size }

// Size returns the number of answers the design asks for: comparisons ×
// repeats. It is known before any answer and shown to the researcher
// before the study opens.
func (d *Design) Size() int { return d.size * d.repeats }

// Progress is the coverage of a landmark design.
type Progress struct {
	// Answered counts the answers the design accepted (at most Repeats per
	// comparison); Needed is Size().
	Answered, Needed int
	// Covered counts the comparisons answered Repeats times; Comparisons
	// is their total.
	Covered, Comparisons int
	// MinAnswers is the least number of answers of any comparison.
	MinAnswers int
}

// Fraction returns Answered / Needed (1 for an empty design).
func (p Progress) Fraction() float64 {
	if p.Needed == 0 {
		return 1
	}
	return float64(p.Answered) / float64(p.Needed)
}

// Progress reports the coverage so far.
func (d *Design) Progress() Progress {
	return Progress{
		Answered:    d.answered,
		Needed:      d.Size(),
		Covered:     d.hist[d.repeats],
		Comparisons: d.size,
		MinAnswers:  d.level,
	}
}

// Done reports whether every comparison has Repeats answers.
func (d *Design) Done() bool { return d.level >= d.repeats }

// Slots returns the size of the comparison index space: indices 0..Slots()-1,
// of which Comparisons() are valid (KeyAt reports which).
func (d *Design) Slots() int { return d.slots }

// KeyAt returns the comparison with index i and whether i names a
// comparison of the design (some indices of the space are unused).
func (d *Design) KeyAt(i int) (triplet.Key, bool) {
	if i < 0 || i >= d.slots {
		return triplet.Key{}, false
	}
	return d.keyAt(i)
}

func (d *Design) keyAt(i int) (triplet.Key, bool) {
	switch d.variant {
	case K1:
		P := len(d.pairs)
		x, p := i/P, d.pairs[i%P]
		if px := d.pos[x]; px == p[0] || px == p[1] {
			return triplet.Key{}, false
		}
		return triplet.Key{Anchor: x, J: d.lm[p[0]], K: d.lm[p[1]]}, true
	default:
		L := len(d.lm)
		B := L * (L - 1)
		x, r := i/B, i%B
		j, k := r/(L-1), r%(L-1)
		if k >= j {
			k++
		}
		lj, lk := d.lm[j], d.lm[k]
		if x == lj || x == lk || (d.pos[x] >= 0 && x > lk) {
			return triplet.Key{}, false
		}
		return triplet.Key{Anchor: lj, J: min(x, lk), K: max(x, lk)}, true
	}
}

// Index returns the index of the comparison k (options in either order)
// and whether the design asks it.
func (d *Design) Index(k triplet.Key) (int, bool) {
	a, j, c := k.Anchor, k.J, k.K
	if j > c {
		j, c = c, j
	}
	if a < 0 || j < 0 || a >= d.n || c >= d.n || a == j || a == c || j == c {
		return 0, false
	}
	switch d.variant {
	case K1:
		pj, pk := int(d.pos[j]), int(d.pos[c])
		if pj < 0 || pk < 0 {
			return 0, false
		}
		L := len(d.lm)
		// pairs are listed a < b lexicographically; lm is sorted, so pj < pk.
		p := pj*(2*L-pj-1)/2 + (pk - pj - 1)
		return a*len(d.pairs) + p, true
	default:
		pa := int(d.pos[a])
		if pa < 0 {
			return 0, false
		}
		pj, pk := d.pos[j], d.pos[c]
		var x, l int
		switch {
		case pk >= 0: // both landmarks: x is the smaller; or only c is
			x, l = j, int(pk)
		case pj >= 0:
			x, l = c, int(pj)
		default:
			return 0, false
		}
		L := len(d.lm)
		if l > pa {
			l--
		}
		return x*L*(L-1) + pa*(L-1) + l, true
	}
}

// Count returns how many answers comparison index i has (0 for an unused
// index).
func (d *Design) Count(i int) int {
	if i < 0 || i >= d.slots {
		return 0
	}
	return int(d.counts[i])
}

// Open appends to dst up to limit comparisons (all when limit <= 0), the
// least-answered first, ties in the design's seeded random order; each
// Need asks for the answers the comparison still lacks.
func (d *Design) Open(dst []design.Need, limit int) []design.Need {
	return d.OpenExcept(dst, limit, nil)
}

// OpenExcept is Open leaving out the comparisons for which skip returns
// true, and adjusting the rest: the store passes a skip that removes the
// comparisons a participant has already answered, and subtracts the
// answers out on lease from Need.Answers (returning true when none are
// left). skip may modify *n; nil skips nothing. The order is the order of
// Open.
func (d *Design) OpenExcept(dst []design.Need, limit int, skip func(i int, n *design.Need) bool) []design.Need {
	found := 0
	need := new(design.Need) // one allocation per call: skip receives its address
	for lv := d.level; lv < d.repeats; lv++ {
		start := uint64(0)
		f := d.perm
		if lv == d.level {
			start = d.cursor
		} else {
			f = newFeistel(uint64(d.slots), d.seed, lv)
		}
		dom := f.domain()
		for p := start; p < dom; p++ {
			s := f.at(p)
			if s >= uint64(d.slots) || int(d.counts[s]) != lv {
				continue
			}
			k, ok := d.keyAt(int(s))
			if !ok {
				continue
			}
			*need = design.Need{Key: k, Answers: d.repeats - lv}
			if skip != nil && skip(int(s), need) {
				continue
			}
			dst = append(dst, *need)
			found++
			if limit > 0 && found >= limit {
				return dst
			}
		}
	}
	return dst
}

// Record counts one answer. It returns false, leaving the state unchanged,
// for an answer to a comparison outside the design or one that already has
// Repeats answers.
func (d *Design) Record(t triplet.Triplet) bool {
	if t.Valid(d.n) != nil {
		return false
	}
	i, ok := d.Index(triplet.KeyOf(t))
	if !ok {
		return false
	}
	if _, ok := d.keyAt(i); !ok {
		return false
	}
	c := int(d.counts[i])
	if c >= d.repeats {
		return false
	}
	d.counts[i]++
	d.hist[c]--
	d.hist[c+1]++
	d.answered++
	if c == d.level && d.hist[c] == 0 {
		d.resetLevel()
	} else {
		d.advance()
	}
	return true
}

// resetLevel moves level to the least count present and restarts the
// cursor at the beginning of that level's order.
func (d *Design) resetLevel() {
	d.level = 0
	for d.level < d.repeats && d.hist[d.level] == 0 {
		d.level++
	}
	d.perm = newFeistel(uint64(d.slots), d.seed, d.level)
	d.cursor = 0
	d.advance()
}

// advance moves the cursor past positions that hold no comparison with
// count == level. Amortised over a level it visits each position once.
func (d *Design) advance() {
	if d.level >= d.repeats {
		d.cursor = d.perm.domain()
		return
	}
	dom := d.perm.domain()
	for ; d.cursor < dom; d.cursor++ {
		s := d.perm.at(d.cursor)
		if s >= uint64(d.slots) || int(d.counts[s]) != d.level {
			continue
		}
		if _, ok := d.keyAt(int(s)); ok {
			return
		}
	}
}
