package basis

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
)

// trueOrder returns the items other than head by increasing true distance
// (ties by index, as the oracle breaks them towards the lower index).
func trueOrder(x *mat.Dense, head int) []int {
	n, _ := x.Dims()
	var o []int
	for i := range n {
		if i != head {
			o = append(o, i)
		}
	}
	slices.SortStableFunc(o, func(a, b int) int {
		da, db := triplet.SqDist(x, head, a), triplet.SqDist(x, head, b)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	return o
}

func TestSortsMatchTrueOrderWithoutNoise(t *testing.T) {
	t.Parallel()
	x := triplet.Gaussian(triplet.NewRand(3), 200, 3, 1)
	s := New(200, Config{Seed: 3})
	st := Run(s, triplet.NewOracle(x, 0, 3), 0, 0)
	if !st.Done || st.Rejected != 0 || st.FallbackAnswers != 0 {
		t.Fatalf("run: %+v", st)
	}
	if len(s.orders) < 3 {
		t.Fatalf("only %d sorts", len(s.orders))
	}
	for h, order := range s.orders {
		if !slices.Equal(order[1:], trueOrder(x, h)) {
			t.Errorf("sort for head %d differs from the true order", h)
		}
	}
	// The tournament winner p1 is the point farthest from z.
	if far := trueOrder(x, s.z); s.ends[0] != far[len(far)-1] {
		t.Errorf("p1 = %d, farthest from z = %d", s.ends[0], far[len(far)-1])
	}
	// Every learned triplet is true; no comparison was asked twice.
	seen := make(map[triplet.Key]bool)
	for _, tr := range s.Triplets() {
		if tr != triplet.Truth(x, tr.Anchor, tr.Closer, tr.Farther) {
			t.Fatalf("learned %v is false", tr)
		}
		k := triplet.KeyOf(tr)
		if seen[k] {
			t.Fatalf("comparison %v decided twice", k)
		}
		seen[k] = true
	}
	if len(s.Triplets()) != st.Answers {
		t.Errorf("%d triplets learned from %d answers with repeats 1", len(s.Triplets()), st.Answers)
	}
}

func TestComparisonsPerSortNearQuicksortExpectation(t *testing.T) {
	t.Parallel()
	// n-2 tournament matches plus, per sort of n-1 items, about the
	// expected 2(m+1)H_m - 4m comparisons of randomised quicksort.
	const n = 500
	x := triplet.UniformCube(triplet.NewRand(5), n, 2)
	s := New(n, Config{Seed: 5})
	st := Run(s, triplet.NewOracle(x, 0, 5), 0, 0)
	perSort := float64(st.Answers-(n-2)) / float64(s.sorts)
	want := expectedQuicksort(n - 1)
	if math.Abs(perSort-want) > 0.15*want {
		t.Errorf("%.0f comparisons per sort, expected about %.0f", perSort, want)
	}
	if nlogn := (n - 1) * math.Log2(n-1); perSort > 1.3*nlogn {
		t.Errorf("%.0f comparisons per sort, more than 1.3 n log2 n = %.0f", perSort, 1.3*nlogn)
	}
}

func TestManyComparisonsOpenAtOnce(t *testing.T) {
	t.Parallel()
	const n = 301
	x := triplet.UniformCube(triplet.NewRand(7), n, 2)
	o := triplet.NewOracle(x, 0, 7)
	s := New(n, Config{Seed: 7})
	// Tournament: all first-round matches open together.
	if got := s.NumOpen(); got != (n-1)/2 {
		t.Fatalf("tournament opens %d matches, want %d", got, (n-1)/2)
	}
	for s.Progress().Phase == PhaseFarthest {
		for _, nd := range s.Open(nil, 0) {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
	}
	// The first partition of SortForHead compares all n-2 others to the pivot at once.
	if got := s.NumOpen(); got != n-2 {
		t.Fatalf("first partition opens %d comparisons, want %d", got, n-2)
	}
	// Every step of a sort opens the comparisons of all live partitions.
	open := s.Open(nil, 0)
	anchors := make(map[int]bool)
	for _, nd := range open {
		anchors[nd.Key.Anchor] = true
	}
	if len(anchors) != 1 {
		t.Errorf("one sort at a time in the basis phase, got anchors %v", anchors)
	}
}

// linePoints returns n random points on a line through the origin in the
// plane (seed 9).
func linePoints(n int) *mat.Dense {
	rng := triplet.NewRand(9)
	x := mat.NewDense(n, 2, nil)
	for i := range n {
		u := rng.Float64()
		x.Set(i, 0, 3*u)
		x.Set(i, 1, -2*u)
	}
	return x
}

func TestLineGivesOneAxisWithExactRanks(t *testing.T) {
	t.Parallel()
	// Points on a line: one axis holding every point, d̂ = 1, and the
	// coordinate of each point is its rank along the line (section 2.3).
	// Why exactly the rank: the axis endpoints u and v are the two ends of
	// the segment (p1 is the point farthest from z, the apex the point
	// farthest from p1), and for x on the segment the lens with apex x,
	// {y : r_u[y] ≤ r_u[x] and r_v[y] ≤ r_v[x]}, holds the points between u
	// and x and between x and v at once, i.e. x alone. Its median index in
	// A_1 (ordered by distance from u) is the number of points nearer to u
	// than x: 0 at u, n-1 at v, one orientation for all pairs.
	const n = 60
	x := linePoints(n)
	s := New(n, Config{Seed: 9})
	Run(s, triplet.NewOracle(x, 0, 9), 0, 0)
	if s.DHat() != 1 || len(s.Axes()[0]) != n {
		t.Fatalf("d̂ = %d, axis of %d points; want 1 axis of %d", s.DHat(), len(s.Axes()[0]), n)
	}
	// The expected ranks come from the true positions alone: the line is
	// parametrised by the first coordinate 3u, distinct for the 60 draws.
	axis := s.Axes()[0]
	u := axis[0]
	lo, hi := 0, 0
	for i := range n {
		if x.At(i, 0) < x.At(lo, 0) {
			lo = i
		}
		if x.At(i, 0) > x.At(hi, 0) {
			hi = i
		}
	}
	if !(u == lo && axis[n-1] == hi) && !(u == hi && axis[n-1] == lo) {
		t.Fatalf("axis endpoints %d, %d; the ends of the segment are %d and %d", u, axis[n-1], lo, hi)
	}
	want := make([]float64, n) // rank of i counted from u's end of the line
	for i := range n {
		for j := range n {
			if math.Abs(x.At(j, 0)-x.At(u, 0)) < math.Abs(x.At(i, 0)-x.At(u, 0)) {
				want[i]++
			}
		}
	}
	for k, i := range axis {
		if want[i] != float64(k) {
			t.Fatalf("axis position %d holds item %d of rank %v along the line", k, i, want[i])
		}
	}
	c := s.Coordinates()
	if r, d := c.Dims(); r != n || d != 1 {
		t.Fatalf("coordinates %d×%d", r, d)
	}
	for i := range n {
		if got := c.At(i, 0); got != want[i] {
			t.Errorf("item %d: coordinate %v, want its rank %v along the line from item %d", i, got, want[i], u)
		}
	}
}

// The rank-difference rule places every item at r_u − r_v along each axis
// with endpoints u and v; the same answers give the same basis under either
// rule (the rule spends no comparisons), and on a line it orders the points
// exactly.
func TestRankDifferenceCoordinates(t *testing.T) {
	t.Parallel()
	x := triplet.Gaussian(triplet.NewRand(21), 200, 3, 1)
	med := New(200, Config{Seed: 21})
	Run(med, triplet.NewOracle(x, 0, 21), 0, 0)
	rd := New(200, Config{Seed: 21, Coordinates: CoordRankDifference})
	Run(rd, triplet.NewOracle(x, 0, 21), 0, 0)
	if !slices.Equal(med.Triplets(), rd.Triplets()) || !slices.EqualFunc(med.Axes(), rd.Axes(), slices.Equal) {
		t.Fatal("the coordinate rule changed the questions or the axes")
	}
	c := rd.Coordinates()
	if _, d := c.Dims(); d != rd.DHat() || d == 0 {
		t.Fatalf("%d coordinates for d̂ = %d", d, rd.DHat())
	}
	for a, axis := range rd.Axes() {
		ru, rv := rd.Ranks(axis[0]), rd.Ranks(axis[len(axis)-1])
		for i := range 200 {
			if got, want := c.At(i, a), float64(ru[i]-rv[i]); got != want {
				t.Fatalf("item %d axis %d: %v, want r_u − r_v = %v", i, a, got, want)
			}
		}
	}
	if mat.Equal(c, med.Coordinates()) {
		t.Fatal("both rules gave the same coordinates")
	}
	if _, back := roundTrip(t, rd); back.Config().Coordinates != CoordRankDifference || !mat.Equal(back.Coordinates(), c) {
		t.Fatal("a restored scheme lost its coordinate rule")
	}

	// Points on a line: the rank difference is strictly monotone along it.
	const n = 60
	line := linePoints(n)
	s := New(n, Config{Seed: 9, Coordinates: CoordRankDifference})
	Run(s, triplet.NewOracle(line, 0, 9), 0, 0)
	lc := s.Coordinates()
	sign := 0.0
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			p := (line.At(i, 0) - line.At(j, 0)) * (lc.At(i, 0) - lc.At(j, 0))
			if p == 0 || (sign != 0 && math.Signbit(p) != math.Signbit(sign)) {
				t.Fatalf("points %d and %d out of order or tied", i, j)
			}
			sign = p
		}
	}
}

func TestGridFindsTwoAxes(t *testing.T) {
	t.Parallel()
	// A dense 20×20 grid (jittered to avoid ties) is two-dimensional.
	rng := triplet.NewRand(11)
	x := mat.NewDense(400, 2, nil)
	for i := range 400 {
		x.Set(i, 0, float64(i%20)+0.01*rng.Float64())
		x.Set(i, 1, float64(i/20)+0.01*rng.Float64())
	}
	s := New(400, Config{Seed: 11})
	Run(s, triplet.NewOracle(x, 0, 11), 0, 0)
	if s.DHat() != 2 {
		t.Errorf("d̂ = %d on a 2-D grid", s.DHat())
	}
	if c := s.Coordinates(); c == nil {
		t.Error("no coordinates")
	} else if r, d := c.Dims(); r != 400 || d != 2 {
		t.Errorf("coordinates %d×%d", r, d)
	}
}

func TestRepeatsMajority(t *testing.T) {
	t.Parallel()
	// With error 0.1 and 3 repeats: no comparison is handed out more than
	// 3 times, every answer the driver gives is accepted, and each learned
	// triplet is the majority of the 3 answers recorded for it.
	const n = 150
	x := triplet.Gaussian(triplet.NewRand(13), n, 2, 1)
	s := New(n, Config{Seed: 13, Repeats: 3})
	st := Run(s, triplet.NewOracle(x, 0.1, 13), 50, 0)
	if !st.Done || st.MaxPerComparison > 3 || st.Rejected != 0 {
		t.Fatalf("run: done %v, max per comparison %d, rejected %d", st.Done, st.MaxPerComparison, st.Rejected)
	}
	votes := triplet.NewVotes()
	for _, tr := range st.Triplets {
		votes.Add(tr)
	}
	for _, tr := range s.Triplets() {
		c := votes.Get(triplet.KeyOf(tr))
		if c.Total() < 3 {
			t.Fatalf("%v decided on %d answers", tr, c.Total())
		}
		if votes.Count(tr.Anchor, tr.Closer, tr.Farther) < 2 {
			t.Fatalf("%v is not the majority of %+v", tr, c)
		}
	}
	if st.DesignAnswers != 3*len(s.Triplets()) {
		t.Errorf("%d design answers for %d comparisons", st.DesignAnswers, len(s.Triplets()))
	}
}

func TestRecordIgnoresWhatIsNotOpen(t *testing.T) {
	t.Parallel()
	s := New(10, Config{Seed: 1})
	before, _ := s.MarshalState()
	for _, tr := range []triplet.Triplet{{Anchor: 0, Closer: 0, Farther: 1}, {Anchor: 0, Closer: 1, Farther: 12}, {Anchor: -1, Closer: 2, Farther: 3}} {
		if s.Record(tr) {
			t.Errorf("Record(%v) accepted", tr)
		}
	}
	nd := s.Open(nil, 1)[0]
	// the same options with another anchor: not open (all open
	// comparisons share the tournament's anchor)
	other := 0
	for other == nd.Key.Anchor || other == nd.Key.J || other == nd.Key.K {
		other++
	}
	if s.Record(triplet.Triplet{Anchor: other, Closer: nd.Key.J, Farther: nd.Key.K}) {
		t.Error("Record accepted a comparison that is not open")
	}
	after, _ := s.MarshalState()
	if !bytes.Equal(before, after) {
		t.Error("refused answers changed the state")
	}
	if !s.Record(triplet.Triplet{Anchor: nd.Key.Anchor, Closer: nd.Key.K, Farther: nd.Key.J}) {
		t.Error("open comparison refused")
	}
	if s.Record(triplet.Triplet{Anchor: nd.Key.Anchor, Closer: nd.Key.K, Farther: nd.Key.J}) {
		t.Error("surplus repeat accepted")
	}
}

func TestOpenLimitAndOrder(t *testing.T) {
	t.Parallel()
	s := New(50, Config{Seed: 2, Repeats: 3})
	all := s.Open(nil, 0)
	some := s.Open(nil, 5)
	if len(some) != 5 || !slices.Equal(some, all[:5]) {
		t.Fatalf("Open(5) = %v, first of all = %v", some, all[:5])
	}
	for _, nd := range all {
		if nd.Answers != 3 || nd.Key.J >= nd.Key.K {
			t.Fatalf("need %+v", nd)
		}
	}
	var _ design.Design = s
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{{Repeats: 2}, {Repeats: -1}, {MaxAxes: -1}, {Coordinates: "projection"}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	for _, c := range []Config{{}, {Repeats: 1}, {Repeats: 5, Extra: true, MaxAxes: 3}, {Coordinates: CoordMedian}, {Coordinates: CoordRankDifference}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestMaxAxes(t *testing.T) {
	t.Parallel()
	x := triplet.UniformCube(triplet.NewRand(4), 300, 3)
	s := New(300, Config{Seed: 4, MaxAxes: 1})
	Run(s, triplet.NewOracle(x, 0, 4), 0, 0)
	if s.DHat() != 1 {
		t.Errorf("d̂ = %d with MaxAxes 1", s.DHat())
	}
}

func TestExtraSortsNearestNeighbours(t *testing.T) {
	t.Parallel()
	// Section 4: after the basis, each point's 2⌈log2 n⌉ nearest points in
	// the basis embedding are sorted by distance from it.
	const n = 100
	x := triplet.UniformCube(triplet.NewRand(8), n, 2)
	s := New(n, Config{Seed: 8, Extra: true})
	Run(s, triplet.NewOracle(x, 0, 8), 0, 0)
	if !s.Done() || s.Progress().Phase != PhaseDone {
		t.Fatal("not done")
	}
	k := int(math.Ceil(math.Log2(n)))
	c := s.Coordinates()
	know := make(map[triplet.Key]bool)
	for _, tr := range s.Triplets() {
		know[triplet.KeyOf(tr)] = true
	}
	for h := range n {
		nb := triplet.Nearest(nil, c, h, 2*k)
		order := trueOrder(x, h)
		pos := make(map[int]int)
		for i, v := range order {
			pos[v] = i
		}
		// consecutive neighbours in true order must be ordered by a chain
		// of learned answers (the sort established their order)
		sorted := slices.Clone(nb)
		slices.SortFunc(sorted, func(a, b int) int { return pos[a] - pos[b] })
		for a := 0; a+1 < len(sorted); a++ {
			if !impliedCloser(s, h, sorted[a], sorted[a+1]) {
				t.Fatalf("head %d: order of %d and %d not established", h, sorted[a], sorted[a+1])
			}
		}
	}
}

// impliedCloser reports whether the learned answers of head h place x
// before y, directly or through a chain.
func impliedCloser(s *Scheme, h, x, y int) bool {
	seen := map[int]bool{x: true}
	stack := []int{x}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == y {
			return true
		}
		for _, tr := range s.learned {
			if tr.Anchor == h && tr.Closer == u && !seen[tr.Farther] {
				seen[tr.Farther] = true
				stack = append(stack, tr.Farther)
			}
		}
	}
	return false
}

func TestProgressThroughARun(t *testing.T) {
	t.Parallel()
	const n = 200
	x := triplet.UniformCube(triplet.NewRand(6), n, 3)
	o := triplet.NewOracle(x, 0, 6)
	s := New(n, Config{Seed: 6, Extra: true})
	p := s.Progress()
	if p.Phase != PhaseFarthest || p.SortDone != 0 || p.SortTotal != n-2 {
		t.Fatalf("start: %+v", p)
	}
	var phases []string
	lastSorts, lastDone := 0, 0
	for !s.Done() {
		for _, nd := range s.Open(nil, 10) {
			s.Record(o.Answer(nd.Key.Anchor, nd.Key.J, nd.Key.K))
		}
		p := s.Progress()
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
			lastDone = 0
		}
		if p.SortDone > p.SortTotal || p.Sorts < lastSorts || p.Axes != s.DHat() || p.Decided != len(s.Triplets()) {
			t.Fatalf("inconsistent progress %+v", p)
		}
		if p.Sorts == lastSorts && p.SortDone < lastDone {
			t.Fatalf("progress went back: %+v (was %d done)", p, lastDone)
		}
		lastSorts, lastDone = p.Sorts, p.SortDone
		if p.Step == "" {
			t.Fatalf("no step in %+v", p)
		}
	}
	want := []string{PhaseFarthest, PhaseSort, PhaseExtra, PhaseDone}
	if !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if p := s.Progress(); p.Sorts < 3 || p.Open != 0 || p.DHat != s.DHat() {
		t.Errorf("end: %+v", p)
	}
}

func TestRunBudgetAndFallbacks(t *testing.T) {
	t.Parallel()
	const n = 100
	x := triplet.UniformCube(triplet.NewRand(12), n, 2)
	o := triplet.NewOracle(x, 0, 12)
	s := New(n, Config{Seed: 12})
	st := Run(s, o, 30, 1000)
	if st.Answers != 1000 || st.Done || st.DesignAnswers+st.FallbackAnswers != st.Answers || len(st.Triplets) != 1000 {
		t.Fatalf("budget run: %+v", st)
	}
	// 30 annotators but 49 first-round matches, then 24, 12, ...: the
	// tournament's later rounds leave annotators idle, so fallbacks occur.
	if st.FallbackSteps == 0 || st.FallbackAnswers == 0 {
		t.Errorf("no fallbacks with 30 annotators: %+v", st)
	}
	rest := Run(s, o, 30, 0)
	if !rest.Done || s.Answers() != st.DesignAnswers+rest.DesignAnswers {
		t.Errorf("continued run: done %v, %d answers accepted, %d+%d design answers", rest.Done, s.Answers(), st.DesignAnswers, rest.DesignAnswers)
	}
}

func TestSmallAndDegenerateSets(t *testing.T) {
	t.Parallel()
	for n := 3; n <= 8; n++ {
		for _, extra := range []bool{false, true} {
			x := triplet.Gaussian(triplet.NewRand(uint64(n)), n, 2, 1)
			s := New(n, Config{Seed: uint64(n), Extra: extra, Repeats: 3})
			st := Run(s, triplet.NewOracle(x, 0.2, uint64(n)), 4, 0)
			if !st.Done || s.DHat() < 1 || st.Rejected != 0 {
				t.Errorf("n=%d extra=%v: done %v, d̂ %d, %+v", n, extra, st.Done, s.DHat(), st)
			}
		}
	}
	// All points in one place: every distance ties (broken by index).
	x := mat.NewDense(40, 3, nil)
	s := New(40, Config{Seed: 1, Extra: true})
	if st := Run(s, triplet.NewOracle(x, 0, 1), 0, 0); !st.Done {
		t.Error("identical points: not done")
	}
}
