package kernel

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestBothTriangles checks bothTriangles on a symmetric 3×3 matrix (true)
// and on each copy of it with one off-diagonal entry changed (false, since
// the entry no longer equals its mirror image).
func TestBothTriangles(t *testing.T) {
	t.Parallel()
	sym := []float64{
		1, 2, 3,
		2, 4, 5,
		3, 5, 6,
	}
	if !bothTriangles(sym, 3) {
		t.Fatal("symmetric matrix reported asymmetric")
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if i == j {
				continue
			}
			d := slices.Clone(sym)
			d[i*3+j] += 10
			if bothTriangles(d, 3) {
				t.Errorf("entry (%d,%d) changed: reported symmetric", i, j)
			}
		}
	}
}

// symOnly hides the concrete type of a mat.Symmetric.
type symOnly struct{ mat.Symmetric }

// TestFullRows checks the three routes of fullRows: a SymDense with both
// triangles stored (as Matrix returns it) is used in place without a copy, as
// documented; a SymDense with only its upper triangle stored and any other
// mat.Symmetric are copied into a full symmetric row-major slice.
func TestFullRows(t *testing.T) {
	t.Parallel()
	full := []float64{
		1, 2, 3,
		2, 4, 5,
		3, 5, 6,
	}
	k := mat.NewSymDense(3, slices.Clone(full))
	got := fullRows(k)
	if !slices.Equal(got, full) || &got[0] != &k.RawSymmetric().Data[0] {
		t.Errorf("both triangles: fullRows = %v (in place %v), want the matrix's own storage %v",
			got, &got[0] == &k.RawSymmetric().Data[0], full)
	}
	upper := []float64{
		1, 2, 3,
		0, 4, 5,
		0, 0, 6,
	}
	u := mat.NewSymDense(3, slices.Clone(upper))
	got = fullRows(u)
	if !slices.Equal(got, full) || &got[0] == &u.RawSymmetric().Data[0] {
		t.Errorf("upper triangle only: fullRows = %v, want a new slice %v", got, full)
	}
	if !slices.Equal(u.RawSymmetric().Data, upper) {
		t.Errorf("fullRows modified its input to %v", u.RawSymmetric().Data)
	}
	if got := fullRows(symOnly{u}); !slices.Equal(got, full) {
		t.Errorf("other Symmetric: fullRows = %v, want %v", got, full)
	}
}

// TestKernelKMeansClusterCounts checks the ends of the clusters argument:
// clusters = n puts every item alone (labels 0..n-1 in order of first
// appearance), also with a single restart, and clusters = 1 puts them all
// together, while 0, n+1 and restarts 0 panic as documented.
func TestKernelKMeansClusterCounts(t *testing.T) {
	t.Parallel()
	x := triplet.Gaussian(triplet.NewRand(30), 5, 2, 1)
	k := linearKernel(x)
	if got := KernelKMeans(k, 5, 3, 1); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("5 clusters of 5 items: %v, want each alone", got)
	}
	if got := KernelKMeans(k, 1, 3, 1); !slices.Equal(got, []int{0, 0, 0, 0, 0}) {
		t.Errorf("1 cluster: %v, want all 0", got)
	}
	// One restart is allowed: 5 clusters of 5 items again.
	func() {
		defer func() {
			if e := recover(); e != nil {
				t.Errorf("1 restart: panic %v", e)
			}
		}()
		if got := KernelKMeans(k, 5, 1, 1); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
			t.Errorf("5 clusters, 1 restart: %v, want each alone", got)
		}
	}()
	for _, c := range []struct{ clusters, restarts int }{{0, 1}, {6, 1}, {2, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("KernelKMeans(%d clusters, %d restarts) of 5 items did not panic", c.clusters, c.restarts)
				}
			}()
			KernelKMeans(k, c.clusters, c.restarts, 1)
		}()
	}
}

// scripted records the calls kmeansRun makes to its distance function and
// answers each with the distances of the next step of a script. Every call
// must pass counts that match the labels.
type scripted struct {
	t     *testing.T
	calls int
	labs  [][]int
	step  func(call int, lab []int, dist []float64)
}

func (s *scripted) distances(lab, count []int, dist []float64) {
	s.t.Helper()
	s.calls++
	if s.calls > 1000 {
		s.t.Fatalf("distance function called %d times: kmeansRun does not stop", s.calls)
	}
	s.labs = append(s.labs, slices.Clone(lab))
	want := make([]int, len(count))
	for _, l := range lab {
		want[l]++
	}
	if !slices.Equal(count, want) {
		s.t.Fatalf("call %d: counts %v for labels %v, want %v", s.calls, count, lab, want)
	}
	s.step(s.calls, lab, dist)
}

// TestKMeansRunStopsWhenNothingChanges: when every distance is equal no item
// moves (an item leaves its cluster only for a strictly nearer one), so the
// run takes one assignment step, calls the distance function twice (the step
// and the final objective) and returns its initial assignment.
func TestKMeansRunStopsWhenNothingChanges(t *testing.T) {
	t.Parallel()
	s := &scripted{t: t, step: func(_ int, _ []int, dist []float64) {
		for i := range dist {
			dist[i] = 1
		}
	}}
	lab, obj := kmeansRun(6, 3, triplet.NewRand(4), s.distances)
	if s.calls != 2 || !slices.Equal(lab, s.labs[0]) {
		t.Errorf("%d calls, labels %v from initial %v; want 2 calls and no change", s.calls, lab, s.labs[0])
	}
	if obj != 6 {
		t.Errorf("objective %v, want 6 × 1", obj)
	}
}

// TestKMeansRunRefillsEmptyCluster scripts a first step in which cluster 2
// empties: items 0, 1, 2 are nearest to cluster 0 (distances 0.1, 0.2, 0.3)
// and item 3 to cluster 1 (0.9). Cluster 2 must take the item farthest from
// its new mean among those whose cluster keeps another member: item 2 (0.3),
// not item 3, which is alone in cluster 1. The assignment {0,0,2,1} is then
// kept (each item at distance 0 from its own cluster) and the objective is 0.
// All distances are below 1, so a search that started at 1 would find none.
func TestKMeansRunRefillsEmptyCluster(t *testing.T) {
	t.Parallel()
	first := [4][3]float64{
		{0.1, 0.8, 0.8},
		{0.2, 0.8, 0.8},
		{0.3, 0.8, 0.8},
		{0.95, 0.9, 0.95},
	}
	s := &scripted{t: t, step: func(call int, lab []int, dist []float64) {
		for i := 0; i < 4; i++ {
			for j := 0; j < 3; j++ {
				if call == 1 {
					dist[i*3+j] = first[i][j]
				} else if lab[i] == j {
					dist[i*3+j] = 0
				} else {
					dist[i*3+j] = 1
				}
			}
		}
	}}
	lab, obj := kmeansRun(4, 3, triplet.NewRand(5), s.distances)
	want := []int{0, 0, 2, 1}
	if !slices.Equal(lab, want) || obj != 0 {
		t.Errorf("labels %v, objective %v; want %v and 0", lab, obj, want)
	}
	if s.calls != 3 || !slices.Equal(s.labs[1], want) {
		t.Errorf("%d calls with labels %v; want 3, the second with %v", s.calls, s.labs, want)
	}
}

// TestKMeansRunRefillSkipsSingleton is a second empty-cluster script, with
// the farthest item alone in its cluster and listed first: item 0 is nearest
// to cluster 1 (0.9), items 1, 2, 3 to cluster 0 (0.2, 0.1, 0.3), cluster 2
// empties. Item 0 may not move (cluster 1 would empty), so cluster 2 takes
// item 3, the farthest of cluster 0: labels {1, 0, 0, 2}. Item 0's distance
// to cluster 0, 0.95, is the largest entry and is never the one compared.
func TestKMeansRunRefillSkipsSingleton(t *testing.T) {
	t.Parallel()
	first := [4][3]float64{
		{0.95, 0.9, 0.99},
		{0.2, 0.8, 0.8},
		{0.1, 0.8, 0.8},
		{0.3, 0.8, 0.8},
	}
	s := &scripted{t: t, step: func(call int, lab []int, dist []float64) {
		for i := 0; i < 4; i++ {
			for j := 0; j < 3; j++ {
				if call == 1 {
					dist[i*3+j] = first[i][j]
				} else if lab[i] == j {
					dist[i*3+j] = 0
				} else {
					dist[i*3+j] = 1
				}
			}
		}
	}}
	lab, _ := kmeansRun(4, 3, triplet.NewRand(7), s.distances)
	if want := []int{1, 0, 0, 2}; !slices.Equal(lab, want) {
		t.Errorf("labels %v, want %v", lab, want)
	}
}

// TestKMeansRunIterationCap: with distances that send both items to the
// other cluster at every step the run never converges, and stops after
// maxKMeansIter = 100 assignment steps (101 calls with the final one).
func TestKMeansRunIterationCap(t *testing.T) {
	t.Parallel()
	s := &scripted{t: t, step: func(_ int, lab []int, dist []float64) {
		for i := 0; i < 2; i++ {
			dist[i*2+lab[i]] = 1
			dist[i*2+1-lab[i]] = 0
		}
	}}
	kmeansRun(2, 2, triplet.NewRand(6), s.distances)
	if s.calls != maxKMeansIter+1 {
		t.Errorf("%d calls, want %d steps and the final one", s.calls, maxKMeansIter+1)
	}
}

// TestSilhouetteByHand: the linear kernel on the points 0, 1, 10, 11 of the
// line with clusters {0, 1} and {10, 11}. Kernel distance = |x_i − x_j|.
//
//	point 0:  a = 1, b = (10 + 11)/2 = 10.5, s = 9.5/10.5
//	point 1:  a = 1, b = (9 + 10)/2 = 9.5,   s = 8.5/9.5
//	point 10: a = 1, b = (10 + 9)/2 = 9.5,   s = 8.5/9.5
//	point 11: a = 1, b = (11 + 10)/2 = 10.5, s = 9.5/10.5
//
// mean (9.5/10.5 + 8.5/9.5)/2. Points that all coincide give a = b = 0 for
// every item, and s = 0 (not 0/0).
func TestSilhouetteByHand(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(4, 1, []float64{0, 1, 10, 11})
	got := Silhouette(linearKernel(x), []int{4, 4, 7, 7})
	if want := (9.5/10.5 + 8.5/9.5) / 2; !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("Silhouette = %v, want %v", got, want)
	}
	same := mat.NewDense(4, 1, []float64{3, 3, 3, 3})
	if got := Silhouette(linearKernel(same), []int{0, 0, 1, 1}); got != 0 {
		t.Errorf("coinciding points: Silhouette = %v, want 0", got)
	}
}
