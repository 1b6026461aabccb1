// Package basis is the adaptive basis-discovery question design of
// Anderton, Pavlu and Aslam, "Revealing the Basis: Ordinal Embedding through
// Geometry" (the paper file anderton-pavlu-aslam-revealing-the-basis.txt),
// written as a pure state machine that a crowd drives one answer at a time.
//
// The scheme runs Algorithm 1 (ChooseBasis): a knock-out tournament finds
// the point farthest from a random start (line 2), SortForHead ranks every
// item by distance from each axis endpoint, the lens and its apex give the
// second endpoint of an axis (lines 7-8), the convex-hull estimate of
// eq. 2-4 gives the axis points (line 11), the point "above" the most hull
// points is the next candidate (line 12), and the affine-independence test
// (line 19) stops at the dimension estimate d̂. Coordinates are the median
// index of the axis points inside each point's lens (section 2.3). With
// Config.Extra it then sorts the 2k nearest points of every point in that
// embedding, k = ⌈log2 n⌉ (section 4), so that an ordinal embedding (SOE,
// t-STE) of all collected triplets can refine the result.
//
// SortForHead is a quicksort whose partitions run side by side: every
// comparison of a partition against its pivot is open at once, and the
// sub-partitions proceed independently, so a crowd of many annotators is
// kept busy. Each comparison is open until it has Config.Repeats answers and
// the majority decides it. The scheme knows nothing of SQL or HTTP; it is
// deterministic for a seed and the ordered sequence of Record calls, and
// MarshalState/Restore round-trip it exactly.
package basis

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
)

// Config holds the settings of a basis scheme.
type Config struct {
	// Seed fixes every random choice (the start point, the pivots).
	Seed uint64 `json:"seed"`
	// Repeats is how many answers each comparison collects before the
	// majority decides it; it must be odd. 0 means 1.
	Repeats int `json:"repeats"`
	// Extra runs the section 4 phase: sort the 2⌈log2 n⌉ nearest points of
	// every point in the basis embedding.
	Extra bool `json:"extra"`
	// MaxAxes caps the dimension estimate d̂ (0: no cap beyond Algorithm 1).
	MaxAxes int `json:"max_axes,omitempty"`
	// Coordinates is the rule that places every item along each axis:
	// CoordMedian (the zero value, the paper's section 2.3) or
	// CoordRankDifference. It decides the basis embedding and so the
	// neighbours the Extra phase sorts; it costs no comparisons either way.
	Coordinates string `json:"coordinates,omitempty"`
}

// Coordinate rules (Config.Coordinates).
const (
	// CoordMedian is section 2.3 of the paper: the median index in A_i of
	// the axis points inside the lens with the item as its apex.
	CoordMedian = "median"
	// CoordRankDifference is r_u[x] − r_v[x] for an axis with endpoints u
	// and v: the ordinal counterpart of d(x,u)² − d(x,v)², which is affine
	// in the projection of x onto the line uv. On the paper's data sets it
	// gives a higher mean Kendall tau than the median rule (docs/basis.md).
	CoordRankDifference = "rank-difference"
)

// Validate reports whether the settings can be used.
func (c Config) Validate() error {
	if c.Repeats < 0 {
		return fmt.Errorf("basis: repeats %d is negative", c.Repeats)
	}
	if c.Repeats > 0 && c.Repeats%2 == 0 {
		return fmt.Errorf("basis: repeats %d is even; the majority needs an odd number", c.Repeats)
	}
	if c.MaxAxes < 0 {
		return fmt.Errorf("basis: max axes %d is negative", c.MaxAxes)
	}
	switch c.Coordinates {
	case "", CoordMedian, CoordRankDifference:
	default:
		return fmt.Errorf("basis: unknown coordinate rule %q (want %q or %q)", c.Coordinates, CoordMedian, CoordRankDifference)
	}
	return nil
}

func (c Config) repeats() int { return max(c.Repeats, 1) }

// Phases reported by Progress.
const (
	PhaseFarthest = "farthest" // knock-out tournament for the point farthest from the start
	PhaseSort     = "sort"     // SortForHead for an axis endpoint or candidate
	PhaseExtra    = "extra"    // section 4: sorting every point's nearest neighbours
	PhaseDone     = "done"
)

// What the current basis sort is for.
const (
	stageFirst = "first" // p1, the tournament winner (line 3)
	stageApex  = "apex"  // the apex opposite p_i (line 9)
	stageCand  = "cand"  // the candidate for the next axis (line 15)
)

// Owners of open comparisons other than sort jobs.
const (
	ownerMatch  = -1 // a tournament match; Seg is the match id
	ownerCached = -2 // a sort whose head was already sorted; Seg is the head
)

type owner struct {
	Job int `json:"job"`
	Seg int `json:"seg"`
}

// openEntry is one comparison open to the crowd.
type openEntry struct {
	key    triplet.Key
	jc, kc int // answers so far: J closer, K closer
	prio   int // larger first
	seq    uint64
	owners []owner
	closed bool
}

// segment is one quicksort partition: Items[Lo:Hi] of its job against the
// pivot. Wait counts the comparisons still undecided.
type segment struct {
	Lo, Hi, Pivot int
	wait          int
}

// sortJob sorts Items by increasing distance from Head.
type sortJob struct {
	ID      int
	Head    int
	Extra   bool
	Items   []int
	Segs    map[int]*segment
	NextSeg int
	Live    int // segments not yet partitioned
	Decided int // comparisons used so far
}

// Scheme is the basis-discovery design. It implements design.Design. A
// Scheme is not safe for concurrent use: the store (or the simulator)
// serialises Open, Record and MarshalState.
type Scheme struct {
	n   int
	cfg Config
	pcg *rand.PCG
	rng *rand.Rand

	phase string
	stage string

	// tournament (Algorithm 1, lines 1-2)
	z       int
	pool    []int // winners waiting for an opponent
	matches map[int][2]int
	nextM   int

	// comparisons
	known   map[triplet.Key]bool // decided: true when J is closer
	learned []triplet.Triplet    // majority-voted answers in the order decided
	open    map[triplet.Key]*openEntry
	live    []*openEntry // sorted by (-prio, seq); may hold closed entries
	fresh   []*openEntry // opened since live was last sorted
	seq     uint64
	answers int

	// sorts
	jobs    map[int]*sortJob
	nextJob int
	ready   []owner       // transient work list, empty between calls
	orders  map[int][]int // head -> items by increasing distance (head first)
	ranks   map[int][]int // head -> rank of every item (head has 0)
	sorts   int           // SortForHead calls completed

	// basis (Algorithm 1, lines 4-20)
	ends     []int   // p_1, p_2, ... in the order found
	hullSet  []int   // P
	axes     [][]int // A_1..A_d̂, each ordered by distance from its first endpoint
	cand     int
	finished bool // the basis is complete
	coords   *mat.Dense

	extraJobs, extraDone int
	extraDecided         int // comparisons used by finished Extra sorts
}

var _ design.Design = (*Scheme)(nil)

// New returns a basis scheme over n >= 3 items. It panics on n < 3 or an
// invalid Config (see Config.Validate).
func New(n int, cfg Config) *Scheme {
	if n < 3 {
		panic("basis: New needs n >= 3 items")
	}
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	s := newEmpty(n, cfg)
	s.pcg = rand.NewPCG(cfg.Seed, 0x636c6f736572) // the stream of triplet.NewRand
	s.rng = rand.New(s.pcg)
	s.startTournament()
	s.drain()
	return s
}

func newEmpty(n int, cfg Config) *Scheme {
	return &Scheme{
		n:       n,
		cfg:     cfg,
		matches: make(map[int][2]int),
		known:   make(map[triplet.Key]bool),
		open:    make(map[triplet.Key]*openEntry),
		jobs:    make(map[int]*sortJob),
		orders:  make(map[int][]int),
		ranks:   make(map[int][]int),
		cand:    -1,
	}
}

// N returns the number of items.
func (s *Scheme) N() int { return s.n }

// Config returns the settings the scheme was built with.
func (s *Scheme) Config() Config { return s.cfg }

// Open appends the comparisons open now to dst, most wanted first (the
// larger the partition a comparison belongs to, the earlier: it lies on a
// longer path of dependent comparisons), at most limit of them (all when
// limit <= 0). Need.Answers is how many more answers a comparison wants.
func (s *Scheme) Open(dst []design.Need, limit int) []design.Need {
	s.tidy()
	r := s.cfg.repeats()
	for i, e := range s.live {
		if limit > 0 && i == limit {
			break
		}
		dst = append(dst, design.Need{Key: e.key, Answers: r - e.jc - e.kc})
	}
	return dst
}

// NumOpen returns how many comparisons are open.
func (s *Scheme) NumOpen() int { return len(s.open) }

// tidy drops closed entries from live and merges in the fresh ones.
func (s *Scheme) tidy() {
	if len(s.fresh) == 0 && len(s.live) == len(s.open) {
		return
	}
	less := func(a, b *openEntry) int {
		return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(a.seq, b.seq))
	}
	slices.SortFunc(s.fresh, less)
	merged := make([]*openEntry, 0, len(s.open))
	i, j := 0, 0
	for i < len(s.live) || j < len(s.fresh) {
		var e *openEntry
		if j >= len(s.fresh) || (i < len(s.live) && less(s.live[i], s.fresh[j]) < 0) {
			e = s.live[i]
			i++
		} else {
			e = s.fresh[j]
			j++
		}
		if !e.closed {
			merged = append(merged, e)
		}
	}
	s.live = merged
	s.fresh = s.fresh[:0]
}

// Record counts one answer. It reports whether the answer was to an open
// comparison; anything else (a random fallback question, a surplus repeat,
// an invalid triplet) leaves the state unchanged. When a comparison has
// Config.Repeats answers the majority decides it and the scheme advances.
func (s *Scheme) Record(t triplet.Triplet) bool {
	if t.Valid(s.n) != nil {
		return false
	}
	k := triplet.KeyOf(t)
	e := s.open[k]
	if e == nil {
		return false
	}
	if t.Closer == k.J {
		e.jc++
	} else {
		e.kc++
	}
	s.answers++
	if e.jc+e.kc < s.cfg.repeats() {
		return true
	}
	s.decide(e, e.jc > e.kc)
	s.drain()
	return true
}

// Done reports whether the basis, its coordinates and (with Config.Extra)
// the Extra sorts are complete.
func (s *Scheme) Done() bool { return s.phase == PhaseDone }

// DHat returns the number of axes found so far: the dimension estimate d̂
// once the basis is complete.
func (s *Scheme) DHat() int { return len(s.axes) }

// BasisDone reports whether Algorithm 1 has finished (the Extra phase may
// still be running).
func (s *Scheme) BasisDone() bool { return s.finished }

// Axes returns a copy of the axes A_1..A_d̂ found so far, each listing its
// items by increasing distance from its first endpoint.
func (s *Scheme) Axes() [][]int {
	out := make([][]int, len(s.axes))
	for i, a := range s.axes {
		out[i] = slices.Clone(a)
	}
	return out
}

// Triplets returns the majority-voted answers the scheme has learned, in
// the order they were decided.
func (s *Scheme) Triplets() []triplet.Triplet { return slices.Clone(s.learned) }

// Answers returns the number of answers Record accepted.
func (s *Scheme) Answers() int { return s.answers }

// Progress is what a study page shows of a running scheme.
type Progress struct {
	Phase string `json:"phase"` // PhaseFarthest, PhaseSort, PhaseExtra or PhaseDone
	// Step says in words what the current phase works on.
	Step string `json:"step"`
	// Axes is the number of axes found so far; DHat the dimension
	// estimate (equal to Axes; final once the basis is complete).
	Axes int `json:"axes"`
	DHat int `json:"d_hat"`
	// Sorts counts the SortForHead calls completed.
	Sorts int `json:"sorts"`
	// SortDone is the number of comparisons decided in the running sort(s)
	// (all Extra sorts together in PhaseExtra, the matches in
	// PhaseFarthest); SortTotal is that plus the expected number still to
	// come (exact for the tournament, the quicksort expectation
	// 2(m+1)H_m - 4m for each partition of m items otherwise).
	SortDone  int `json:"sort_done"`
	SortTotal int `json:"sort_total"`
	// Open is the number of comparisons open now, Decided the number
	// decided so far and Answers the answers accepted.
	Open    int `json:"open"`
	Decided int `json:"decided"`
	Answers int `json:"answers"`
}

// Progress reports the state for the study page.
func (s *Scheme) Progress() Progress {
	p := Progress{
		Phase: s.phase, Axes: len(s.axes), DHat: len(s.axes), Sorts: s.sorts,
		Open: len(s.open), Decided: len(s.learned), Answers: s.answers,
	}
	switch s.phase {
	case PhaseFarthest:
		// n-2 matches in all; the players still in (waiting or in an open
		// match) have len(pool) + 2·len(matches) - 1 matches to go.
		played := (s.n - 2) - (len(s.pool) + 2*len(s.matches) - 1)
		p.Step = fmt.Sprintf("finding the point farthest from item %d", s.z)
		p.SortDone, p.SortTotal = played, s.n-2
	case PhaseSort, PhaseExtra:
		for _, id := range s.jobIDs() {
			j := s.jobs[id]
			p.SortDone += j.Decided
			p.SortTotal += j.Decided + j.remaining()
		}
		if s.phase == PhaseExtra {
			p.Step = fmt.Sprintf("sorting nearest neighbours: %d of %d points done", s.extraDone, s.extraJobs)
			p.SortDone += s.extraDecided
			p.SortTotal += s.extraDecided
		} else {
			head := -1
			for _, j := range s.jobs {
				head = j.Head
			}
			switch s.stage {
			case stageFirst:
				p.Step = fmt.Sprintf("sorting for endpoint 1 (item %d)", head)
			case stageApex:
				p.Step = fmt.Sprintf("sorting for the apex closing axis %d (item %d)", len(s.axes)+1, head)
			case stageCand:
				p.Step = fmt.Sprintf("sorting for the candidate of axis %d (item %d)", len(s.axes)+1, head)
			}
		}
	case PhaseDone:
		p.Step = fmt.Sprintf("done: d̂ = %d", len(s.axes))
	}
	return p
}

func (j *sortJob) remaining() int {
	r := 0
	for _, sg := range j.Segs {
		m := sg.Hi - sg.Lo
		decided := (m - 1) - sg.wait
		r += max(int(math.Round(expectedQuicksort(m)))-decided, sg.wait)
	}
	return r
}

// expectedQuicksort is the expected number of comparisons of quicksort with
// a uniformly random pivot on m distinct items: 2(m+1)H_m - 4m.
func expectedQuicksort(m int) float64 {
	if m < 2 {
		return 0
	}
	h := 0.0
	for i := 1; i <= m; i++ {
		h += 1 / float64(i)
	}
	return 2*float64(m+1)*h - 4*float64(m)
}

func (s *Scheme) jobIDs() []int {
	ids := make([]int, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ---- comparisons ----

// ask requests the comparison (head; x, y) for owner o. It reports whether
// the answer is already known (then nothing is opened).
func (s *Scheme) ask(head, x, y int, prio int, o owner) bool {
	k := triplet.QuestionKey(head, x, y)
	if _, ok := s.known[k]; ok {
		return true
	}
	if e := s.open[k]; e != nil {
		e.owners = append(e.owners, o)
		return false
	}
	e := &openEntry{key: k, prio: prio, seq: s.seq, owners: []owner{o}}
	s.seq++
	s.open[k] = e
	s.fresh = append(s.fresh, e)
	return false
}

// closer reports whether x is closer to head than y; the comparison must
// be known.
func (s *Scheme) closer(head, x, y int) bool {
	k := triplet.QuestionKey(head, x, y)
	jc, ok := s.known[k]
	if !ok {
		panic(fmt.Sprintf("basis: comparison (%d; %d, %d) not decided", head, x, y))
	}
	return jc == (x == k.J)
}

func (s *Scheme) decide(e *openEntry, jCloser bool) {
	k := e.key
	delete(s.open, k)
	e.closed = true
	s.known[k] = jCloser
	if jCloser {
		s.learned = append(s.learned, triplet.Triplet{Anchor: k.Anchor, Closer: k.J, Farther: k.K})
	} else {
		s.learned = append(s.learned, triplet.Triplet{Anchor: k.Anchor, Closer: k.K, Farther: k.J})
	}
	for _, o := range e.owners {
		s.arrive(o)
	}
}

// arrive notes that one comparison of owner o was decided.
func (s *Scheme) arrive(o owner) {
	switch o.Job {
	case ownerMatch:
		s.ready = append(s.ready, o)
	default:
		j := s.jobs[o.Job]
		j.Decided++
		sg := j.Segs[o.Seg]
		sg.wait--
		if sg.wait == 0 {
			s.ready = append(s.ready, o)
		}
	}
}

// drain runs the work that decided comparisons made ready.
func (s *Scheme) drain() {
	for len(s.ready) > 0 {
		o := s.ready[0]
		s.ready = s.ready[1:]
		switch o.Job {
		case ownerMatch:
			s.finishMatch(o.Seg)
		case ownerCached:
			s.afterSort(o.Seg)
		default:
			s.partition(s.jobs[o.Job], o.Seg)
		}
	}
	s.ready = s.ready[:0]
}

// ---- Algorithm 1, lines 1-2: the farthest point from a random start ----

func (s *Scheme) startTournament() {
	s.phase = PhaseFarthest
	s.z = s.rng.IntN(s.n)
	for x := range s.n {
		if x != s.z {
			s.pool = append(s.pool, x)
		}
	}
	s.pairUp()
}

// pairUp opens a match for every two waiting players (first come, first
// paired), so all matches of a round are open together and a winner meets
// the next winner as soon as both are known.
func (s *Scheme) pairUp() {
	for len(s.pool) >= 2 {
		a, b := s.pool[0], s.pool[1]
		s.pool = s.pool[2:]
		id := s.nextM
		s.nextM++
		s.matches[id] = [2]int{a, b}
		if s.ask(s.z, a, b, s.n, owner{ownerMatch, id}) {
			s.ready = append(s.ready, owner{ownerMatch, id})
		}
	}
	if len(s.pool) == 1 && len(s.matches) == 0 {
		p := s.pool[0]
		s.pool = nil
		s.ends = []int{p}
		s.startSort(p, stageFirst)
	}
}

func (s *Scheme) finishMatch(id int) {
	m := s.matches[id]
	delete(s.matches, id)
	winner := m[0] // the farther from z
	if s.closer(s.z, m[0], m[1]) {
		winner = m[1]
	}
	s.pool = append(s.pool, winner)
	s.pairUp()
}

// ---- SortForHead: a quicksort whose partitions run side by side ----

// startSort ranks every item by distance from head, then continues with
// the given stage of Algorithm 1.
func (s *Scheme) startSort(head int, stage string) {
	s.phase, s.stage = PhaseSort, stage
	if _, ok := s.ranks[head]; ok {
		s.ready = append(s.ready, owner{ownerCached, head})
		return
	}
	items := make([]int, 0, s.n-1)
	for x := range s.n {
		if x != head {
			items = append(items, x)
		}
	}
	s.newJob(head, items, false)
}

func (s *Scheme) newJob(head int, items []int, extra bool) {
	j := &sortJob{ID: s.nextJob, Head: head, Extra: extra, Items: items, Segs: make(map[int]*segment)}
	s.nextJob++
	s.jobs[j.ID] = j
	s.openSegment(j, 0, len(items))
	if j.Live == 0 {
		s.finishJob(j)
	}
}

// openSegment starts the partition of Items[lo:hi] around a random pivot:
// every comparison against the pivot is opened at once.
func (s *Scheme) openSegment(j *sortJob, lo, hi int) {
	m := hi - lo
	if m < 2 {
		return
	}
	pivot := j.Items[lo+s.rng.IntN(m)]
	id := j.NextSeg
	j.NextSeg++
	sg := &segment{Lo: lo, Hi: hi, Pivot: pivot}
	j.Segs[id] = sg
	j.Live++
	for _, x := range j.Items[lo:hi] {
		if x == pivot {
			continue
		}
		if s.ask(j.Head, x, pivot, m, owner{j.ID, id}) {
			j.Decided++
		} else {
			sg.wait++
		}
	}
	if sg.wait == 0 {
		s.ready = append(s.ready, owner{j.ID, id})
	}
}

// partition splits a segment whose comparisons are all decided into the
// items closer than the pivot, the pivot, and the farther ones, and opens
// the two halves.
func (s *Scheme) partition(j *sortJob, id int) {
	sg := j.Segs[id]
	delete(j.Segs, id)
	part := j.Items[sg.Lo:sg.Hi]
	less := make([]int, 0, len(part))
	var more []int
	for _, x := range part {
		switch {
		case x == sg.Pivot:
		case s.closer(j.Head, x, sg.Pivot):
			less = append(less, x)
		default:
			more = append(more, x)
		}
	}
	mid := sg.Lo + len(less)
	copy(part, less)
	part[len(less)] = sg.Pivot
	copy(part[len(less)+1:], more)
	s.openSegment(j, sg.Lo, mid)
	s.openSegment(j, mid+1, sg.Hi)
	j.Live--
	if j.Live == 0 {
		s.finishJob(j)
	}
}

func (s *Scheme) finishJob(j *sortJob) {
	delete(s.jobs, j.ID)
	if j.Extra {
		s.extraDone++
		s.extraDecided += j.Decided
		if s.extraDone == s.extraJobs {
			s.phase = PhaseDone
		}
		return
	}
	order := make([]int, 0, s.n)
	order = append(order, j.Head)
	order = append(order, j.Items...)
	s.setOrder(j.Head, order)
	s.sorts++
	s.afterSort(j.Head)
}

func (s *Scheme) setOrder(head int, order []int) {
	r := make([]int, s.n)
	for i, x := range order {
		r[x] = i
	}
	s.orders[head] = order
	s.ranks[head] = r
}

// ---- Algorithm 1, lines 5-20 ----

func (s *Scheme) afterSort(head int) {
	switch s.stage {
	case stageFirst:
		s.nextAxis()
	case stageApex:
		s.closeAxis(head)
	case stageCand:
		s.testCandidate(head)
	}
}

// nextAxis picks the apex opposite p_i inside the lens of the previous
// endpoints (lines 6-8) and sorts for it.
func (s *Scheme) nextAxis() {
	i := len(s.ends) - 1
	pi := s.ends[i]
	ri := s.ranks[pi]
	apex, best := -1, -1
	for x := range s.n {
		in := true
		for _, pj := range s.ends[:i] {
			if r := s.ranks[pj]; r[x] > r[pi] {
				in = false
				break
			}
		}
		if in && ri[x] > best {
			apex, best = x, ri[x]
		}
	}
	if apex == pi {
		s.finish()
		return
	}
	s.ends = append(s.ends, apex)
	s.startSort(apex, stageApex)
}

// closeAxis records A_d̂ = conv̂({p_i, p_i+1}) (line 11) and chooses the
// candidate for the next axis (line 12).
func (s *Scheme) closeAxis(apex int) {
	pi := s.ends[len(s.ends)-2]
	s.axes = append(s.axes, s.hull([]int{pi, apex}))
	if len(s.axes) == 1 {
		s.hullSet = []int{pi, apex} // lines 16-18: P holds both endpoints of the first axis
	}
	if s.cfg.MaxAxes > 0 && len(s.axes) >= s.cfg.MaxAxes {
		s.finish()
		return
	}
	c, count := s.mostAbove(s.hullSet)
	if count == 0 { // line 13: no point is above any other
		s.finish()
		return
	}
	s.cand = c
	s.startSort(c, stageCand)
}

// testCandidate runs the affine-independence test of line 19 on P ∪ {p}.
func (s *Scheme) testCandidate(c int) {
	s.cand = -1
	p := append(slices.Clone(s.hullSet), c)
	if s.affinelyDependent(p) {
		s.finish()
		return
	}
	s.hullSet = p
	s.ends = append(s.ends, c)
	s.nextAxis()
}

// finish ends Algorithm 1: the coordinates of section 2.3, then the Extra
// phase of section 4 if configured.
func (s *Scheme) finish() {
	s.finished = true
	s.coords = s.embed()
	if !s.cfg.Extra || len(s.axes) == 0 {
		s.phase = PhaseDone
		return
	}
	s.phase = PhaseExtra
	s.stage = ""
	k := int(math.Ceil(math.Log2(float64(s.n))))
	m := min(2*k, s.n-1)
	s.extraJobs = s.n
	for x := range s.n {
		s.newJob(x, triplet.Nearest(nil, s.coords, x, m), true)
	}
}
