package active

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Config configures the active design. Zero fields take the defaults given.
type Config struct {
	// Seed fixes the warm-up questions and the candidate pairs.
	Seed uint64
	// WarmupPerItem is R: random questions are asked until R·n answers
	// are recorded (default 10, Salmon's default), as the scores need an
	// embedding to score against.
	WarmupPerItem int
	// Pool is the number of scored questions a Refresh keeps (default n:
	// one per item). Heads are taken round robin: a refresh covers the
	// next min(Pool, n) heads after the last one answered, ⌈Pool / heads⌉
	// questions each.
	Pool int
	// Repeats is how many answers each pool question wants (default 1).
	Repeats int
	// Score configures the scorer.
	Score ScoreConfig
}

// Defaults and bounds of Config.
const (
	DefaultWarmupPerItem = 10
	MaxWarmupPerItem     = 1000
	MaxPool              = 1000000
	MaxRepeats           = 100
)

// Validate reports a setting out of range.
func (c Config) Validate() error {
	switch {
	case c.WarmupPerItem < 0 || c.WarmupPerItem > MaxWarmupPerItem:
		return fmt.Errorf("active: warm-up of %d answers per item: want 1..%d", c.WarmupPerItem, MaxWarmupPerItem)
	case c.Pool < 0 || c.Pool > MaxPool:
		return fmt.Errorf("active: pool of %d questions: want 1..%d", c.Pool, MaxPool)
	case c.Repeats < 0 || c.Repeats > MaxRepeats:
		return fmt.Errorf("active: %d repeats: want 1..%d", c.Repeats, MaxRepeats)
	}
	if err := c.Score.Validate(); err != nil {
		return fmt.Errorf("active: %w", err)
	}
	return nil
}

func (c Config) withDefaults(n int) Config {
	if c.WarmupPerItem == 0 {
		c.WarmupPerItem = DefaultWarmupPerItem
	}
	if c.Pool == 0 {
		c.Pool = n
	}
	if c.Repeats == 0 {
		c.Repeats = 1
	}
	return c
}

// Design is the active design as a state machine (design.Design). Until
// R·n answers are recorded it offers random questions (the i-th offered
// after r answers is a function of the seed and r + i, as the random
// design). Afterwards it offers the unanswered questions of the pool of
// its last Refresh, in pool order, each wanted Repeats times; when the
// pool runs out before the next Refresh (or there has been none), random
// questions fill in. Every valid answer is accepted, so it never refuses
// one and is never done. It is deterministic: the same seed and the same
// sequence of Record and Refresh calls (with the same points and answers)
// give the same state.
type Design struct {
	n        int
	cfg      Config
	answered int
	// refreshes counts the Refresh calls (the seed of the next pool).
	refreshes int
	// next is the head the next refresh starts from: the one after the
	// head of the last pool question answered.
	next int
	pool []poolEntry
	// index maps a pool question to its entry.
	index map[triplet.Key]int
}

type poolEntry struct {
	key   triplet.Key
	score float64
	// left is the number of answers it still wants.
	left int
}

var _ design.Design = (*Design)(nil)

// New returns the active design over n >= 3 items.
func New(n int, cfg Config) (*Design, error) {
	if n < 3 {
		return nil, fmt.Errorf("active: need at least 3 items, have %d", n)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Design{n: n, cfg: cfg.withDefaults(n), index: map[triplet.Key]int{}}, nil
}

// N returns the number of items.
func (d *Design) N() int { return d.n }

// Config returns the configuration with its defaults filled in (those of
// the scorer are filled in when it runs).
func (d *Design) Config() Config { return d.cfg }

// Answered returns the number of answers recorded.
func (d *Design) Answered() int { return d.answered }

// Warmup returns the number of answers the warm-up takes (R·n).
func (d *Design) Warmup() int { return d.cfg.WarmupPerItem * d.n }

// WarmedUp reports whether the warm-up is over: from now on questions
// come from the pool, so the worker should fit and Refresh.
func (d *Design) WarmedUp() bool { return d.answered >= d.Warmup() }

// Refreshes returns the number of Refresh calls so far.
func (d *Design) Refreshes() int { return d.refreshes }

// PoolLeft returns the number of answers the pool still wants.
func (d *Design) PoolLeft() int {
	left := 0
	for _, e := range d.pool {
		left += e.left
	}
	return left
}

// Pool appends the pool's questions (answered or not) to dst, in order.
func (d *Design) Pool(dst []Question) []Question {
	for _, e := range d.pool {
		dst = append(dst, Question{Key: e.key, Score: e.score})
	}
	return dst
}

// Heads returns the heads the next Refresh scores: min(Pool, n) items in
// round robin order from the one after the last head answered.
func (d *Design) Heads() []int {
	h := min(d.cfg.Pool, d.n)
	heads := make([]int, h)
	for i := range heads {
		heads[i] = (d.next + i) % d.n
	}
	return heads
}

// Refresh replaces the pool by the best questions for the next heads,
// scored against the points x (a fit of the answers, one row per item)
// and the answers so far (all of them: the posteriors and the questions
// already asked come from them): ApplyPool(NextPool(x, answers)). On
// error the design is unchanged.
func (d *Design) Refresh(x *mat.Dense, answers []triplet.Triplet) error {
	qs, err := d.NextPool(x, answers)
	if err != nil {
		return err
	}
	return d.ApplyPool(qs)
}

// NextPool scores the pool the next Refresh would install, without
// changing the design: the heads are Heads(), the candidate pairs are
// drawn with a seed derived from the design's seed and the number of
// refreshes so far. A worker can call it on a copy of the state, outside
// any lock, and hand the result to ApplyPool on the latest state.
func (d *Design) NextPool(x *mat.Dense, answers []triplet.Triplet) ([]Question, error) {
	if x == nil {
		return nil, errors.New("active: refresh without points")
	}
	if r, _ := x.Dims(); r != d.n {
		return nil, fmt.Errorf("active: refresh with %d points for %d items", r, d.n)
	}
	heads := d.Heads()
	perHead := (d.cfg.Pool + len(heads) - 1) / len(heads)
	qs, err := Pool(nil, x, answers, heads, perHead, d.cfg.Score, triplet.Mix64(d.cfg.Seed^0x706f6f6c+uint64(d.refreshes))) // "pool"
	if err != nil {
		return nil, err
	}
	return qs[:min(len(qs), d.cfg.Pool)], nil
}

// ApplyPool installs a pool (from NextPool, possibly computed on an older
// copy of the state) and counts a refresh. Questions over other items, or
// more than the pool size, are refused and leave the design unchanged; a
// question given twice is kept once.
func (d *Design) ApplyPool(qs []Question) error {
	if len(qs) > d.cfg.Pool {
		return fmt.Errorf("active: pool of %d questions, more than its size %d", len(qs), d.cfg.Pool)
	}
	for i, q := range qs {
		k := q.Key
		if err := (triplet.Triplet{Anchor: k.Anchor, Closer: k.J, Farther: k.K}).Valid(d.n); err != nil || k.J >= k.K {
			return fmt.Errorf("active: pool question %d (%d; %d, %d) is not a question over %d items", i, k.Anchor, k.J, k.K, d.n)
		}
	}
	d.setPool(qs)
	d.refreshes++
	return nil
}

func (d *Design) setPool(qs []Question) {
	d.pool = d.pool[:0]
	clear(d.index)
	for _, q := range qs {
		if _, dup := d.index[q.Key]; dup {
			continue
		}
		d.index[q.Key] = len(d.pool)
		d.pool = append(d.pool, poolEntry{key: q.Key, score: q.Score, left: d.cfg.Repeats})
	}
}

// Open appends the questions to ask now, at most limit (one when limit <=
// 0, since random questions never run out): during the warm-up random
// questions; afterwards the pool's unanswered questions in pool order,
// then random questions when the pool has fewer than limit. Calls
// without a Record or Refresh in between return the same questions.
func (d *Design) Open(dst []design.Need, limit int) []design.Need {
	if limit <= 0 {
		limit = 1
	}
	taken := 0
	if d.WarmedUp() {
		for _, e := range d.pool {
			if taken == limit {
				return dst
			}
			if e.left > 0 {
				dst = append(dst, design.Need{Key: e.key, Answers: e.left})
				taken++
			}
		}
	}
	for i := 0; taken < limit; i++ {
		// A random question may repeat a pool question: an extra answer
		// to it, never a refusal.
		rng := triplet.NewRand(triplet.Mix64(triplet.Mix64(d.cfg.Seed^0x616374697665) + uint64(d.answered+i))) // "active"
		a, j, k := triplet.RandomQuestion(rng, d.n)
		dst = append(dst, design.Need{Key: triplet.QuestionKey(a, j, k), Answers: 1})
		taken++
	}
	return dst
}

// Record accepts any valid answer (random questions are always open); an
// answer to a pool question still wanted counts towards it and moves the
// round robin on to the head after its own.
func (d *Design) Record(t triplet.Triplet) bool {
	if t.Valid(d.n) != nil {
		return false
	}
	d.answered++
	if i, ok := d.index[triplet.KeyOf(t)]; ok && d.pool[i].left > 0 {
		d.pool[i].left--
		d.next = (t.Anchor + 1) % d.n
	}
	return true
}

// Done is always false: random questions never run out.
func (d *Design) Done() bool { return false }

// Left returns the answers the i-th pool question (in Pool's order) still
// wants.
func (d *Design) Left(i int) int { return d.pool[i].left }

// PoolIndex returns the place of question k in the pool (Pool's order).
func (d *Design) PoolIndex(k triplet.Key) (int, bool) {
	i, ok := d.index[k]
	return i, ok
}

// PoolSize returns the number of questions in the pool.
func (d *Design) PoolSize() int { return len(d.pool) }
