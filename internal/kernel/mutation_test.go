package kernel

// Tests written for the mutants that survived the sampled mutation run of
// this package (docs/mutation/kernel.md). Each names the mutants it kills.

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// noPanic runs f and turns a panic into a test error, so that a mutant
// that indexes out of range fails on an assertion and not with a crash.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Errorf("%s must not panic: %v", what, e)
		}
	}()
	f()
}

// TestCutEnds: a dendrogram of 4 items written by hand (the points 0, 1, 10,
// 11 of a line under complete linkage: {0,1} and {2,3} at height 1, then
// the two pairs at height 11). Cut accepts both ends of its range and a
// merge list exactly as long as it needs:
//
//	1 cluster  (all 3 merges):         0 0 0 0
//	4 clusters (no merge applied):     0 1 2 3
//	2 clusters from the first 2 merges only: 0 0 1 1
//
// and panics for 0 or 5 clusters and for 2 clusters from 1 merge.
// Kills cluster.go:516:14, 516:30 and 516:49 (CONDITIONALS_BOUNDARY).
func TestCutEnds(t *testing.T) {
	t.Parallel()
	merges := []Merge{{A: 0, B: 1, Height: 1, Size: 2}, {A: 2, B: 3, Height: 1, Size: 2}, {A: 4, B: 5, Height: 11, Size: 4}}
	for _, c := range []struct {
		merges   []Merge
		clusters int
		want     []int
	}{
		{merges, 1, []int{0, 0, 0, 0}},
		{merges, 4, []int{0, 1, 2, 3}},
		{merges[:2], 2, []int{0, 0, 1, 1}},
		{merges, 2, []int{0, 0, 1, 1}},
	} {
		noPanic(t, fmt.Sprintf("Cut(%d merges, 4 items, %d clusters)", len(c.merges), c.clusters), func() {
			if got := Cut(c.merges, 4, c.clusters); !slices.Equal(got, c.want) {
				t.Errorf("Cut(%d merges, 4 items, %d clusters) = %v, want %v", len(c.merges), c.clusters, got, c.want)
			}
		})
	}
	for _, c := range []struct {
		merges   []Merge
		clusters int
	}{{merges, 0}, {merges, 5}, {merges[:1], 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Cut(%d merges, 4 items, %d clusters) did not panic", len(c.merges), c.clusters)
				}
			}()
			Cut(c.merges, 4, c.clusters)
		}()
	}
}

// TestKMeansRunRefillNegativeDistances: the script of
// TestKMeansRunRefillsEmptyCluster with every distance at or below −1, as
// rounding (TestKMeansHugeCoordinates) or an indefinite kernel gives them.
// In the first step items 0, 1, 2 are nearest to cluster 0 (at −1.1, −1.3,
// −1.2) and item 3 to cluster 1, so cluster 2 empties. The rule is the
// same whatever the sign: cluster 2 takes the candidate farthest from its
// new mean, item 0 (−1.1 is the largest of the three; item 3 is alone in
// cluster 1). Labels {2, 0, 0, 1}, then every item is nearest to its own
// cluster (−2 against −1) and the run stops.
//
// The search used to start from the distance −1, so with every candidate
// at or below −1 it found none and indexed item −1. Kills cluster.go:269:15
// (INVERT_NEGATIVES and ARITHMETIC_BASE: a search starting from item 1
// moves item 1) in the fixed code.
func TestKMeansRunRefillNegativeDistances(t *testing.T) {
	t.Parallel()
	first := [4][3]float64{
		{-1.1, -1.05, -1.05},
		{-1.3, -1.05, -1.05},
		{-1.2, -1.05, -1.05},
		{-1.0, -1.5, -1.0},
	}
	s := &scripted{t: t, step: func(call int, lab []int, dist []float64) {
		for i := 0; i < 4; i++ {
			for j := 0; j < 3; j++ {
				switch {
				case call == 1:
					dist[i*3+j] = first[i][j]
				case lab[i] == j:
					dist[i*3+j] = -2
				default:
					dist[i*3+j] = -1
				}
			}
		}
	}}
	noPanic(t, "kmeansRun with distances ≤ −1", func() {
		lab, obj := kmeansRun(4, 3, triplet.NewRand(5), s.distances)
		if want := []int{2, 0, 0, 1}; !slices.Equal(lab, want) || obj != -8 {
			t.Errorf("labels %v, objective %v; want %v and 4 × (−2) = −8", lab, obj, want)
		}
	})
}

// TestKMeansHugeCoordinates: plain k-means of three points of a line into
// three clusters must put each point alone, labels 0 1 2, whatever the
// seed. With the points 10⁹ + 12, 10⁹ + 17, 10⁹ + 20 (Unix times, say) the
// linear kernel's entries are ≈ 10¹⁸, where doubles are 128 apart, so
// K_ab = x_a·x_b is rounded to a multiple of 128: K_00 = 10¹⁸ + 24·10⁹ + 128
// (exact: …+144), K_01 = 10¹⁸ + 29·10⁹ + 256 (…+204), K_11 = 10¹⁸ + 34·10⁹
// + 256 (…+289), and the squared distance K_00 − 2K_01 + K_11 comes out as
// −128 instead of 25; the same for points 1 and 2 (−128 instead of 9).
// Every point is then strictly "nearer" another singleton than its own
// (distance 0), points 0 and 2 both move into point 1's cluster at distance
// −128, and a cluster empties with both candidates below −1. kmeansRun
// indexed item −1 there, in a goroutine, which crashed the whole program.
func TestKMeansHugeCoordinates(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(3, 1, []float64{1e9 + 12, 1e9 + 17, 1e9 + 20})
	var k mat.SymDense
	k.SymOuterK(1, x)
	if d := k.At(0, 0) - 2*k.At(0, 1) + k.At(1, 1); d != -128 {
		t.Fatalf("premise: computed squared distance of points 0 and 1 is %v, want −128", d)
	}
	for seed := uint64(0); seed < 10; seed++ {
		if got := KMeans(x, 3, 2, seed); !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("seed %d: labels %v, want 0 1 2", seed, got)
		}
	}
}

// TestFeaturesKMeansRefillMatchesMatrix: the feature-space k-means must
// give the labels of KernelKMeans on Matrix(f, false), as its doc comment
// promises, also in runs where a cluster empties. Landmarks 0, 1, 2; the
// columns are the pairs (0,1), (0,2), (1,2). From the 16 answers below,
// eq. 2 (then unit rows) gives by hand
//
//	φ0 = (0, 0, −1)        (1,2): 1 answer for 1, 2 for 2
//	φ1 = 0                 no answers
//	φ2 = (1, 0, 0)         (0,1): 2 answers for 0, 1 for 1
//	φ3 = (−1, 1, −1)/√3    one answer on each pair
//	φ4 = (0, 1, −3)/√10    (0,2): 2 for 0, 1 for 2 → 1/3; (1,2): −1
//	φ5 = (−1, 1, 0)/√2
//
// so ‖φ‖² is 1 (0 for item 1) while the rows hold 1, 0, 1, 3, 2, 2 nonzero
// entries. Seed 1 (restarts 1) starts from the clusters {2,5}, {1,4}, {3},
// {0} (drawn by kmeansRun). In the first step item 1 (the origin) moves to
// {2,5}: |μ|² = (2 − √2)/4 ≈ 0.146 < 0.25; item 4 to {0}: 2 − 6/√10 ≈ 0.103
// < 0.25; item 5 to {3}: 2 − 4/√6 ≈ 0.367 < (2 + √2)/4 ≈ 0.854; so {1,4}'s
// cluster empties. The candidates' distances to their new means are 0.146
// (1), 0.854 (2), 0 (3), 0.103 (4), 0.367 (5), 0 (0); item 2 is the
// farthest and takes the empty cluster, and {0,4}, {1}, {2}, {3,5} is
// stable: labels 0 1 2 3 0 3. A diagonal of nonzero counts instead of
// ‖φ‖² (cluster.go:91:17, x*x → x/x) adds 2 to item 3's distances and 1 to
// items 4 and 5: the same assignments, but the refill takes item 3 (2 >
// 0.854) and ends in {0,4}, {1,2}, {3}, {5}. Of the 100 seeds below, 18
// runs pass through an emptied cluster (13 of them end elsewhere under that
// mutant). In every step of the 100 runs the two smallest distances of an
// item, and the two farthest candidates of a refill, differ by more than
// 0.019, far above rounding, so the two code paths cannot part on a tie.
func TestFeaturesKMeansRefillMatchesMatrix(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{
		{Anchor: 3, Closer: 0, Farther: 2}, {Anchor: 4, Closer: 0, Farther: 2}, {Anchor: 4, Closer: 0, Farther: 2},
		{Anchor: 3, Closer: 1, Farther: 0}, {Anchor: 5, Closer: 0, Farther: 2}, {Anchor: 2, Closer: 0, Farther: 1},
		{Anchor: 4, Closer: 2, Farther: 0}, {Anchor: 2, Closer: 0, Farther: 1}, {Anchor: 4, Closer: 2, Farther: 1},
		{Anchor: 0, Closer: 2, Farther: 1}, {Anchor: 2, Closer: 1, Farther: 0}, {Anchor: 3, Closer: 2, Farther: 1},
		{Anchor: 0, Closer: 2, Farther: 1}, {Anchor: 4, Closer: 2, Farther: 1}, {Anchor: 5, Closer: 1, Farther: 0},
		{Anchor: 0, Closer: 1, Farther: 2},
	}
	f, err := NewFeatures(K1, 6, ts, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	r3, r10, r2 := 1/math.Sqrt(3), 1/math.Sqrt(10), 1/math.Sqrt(2)
	rows := [][]float64{{0, 0, -1}, {0, 0, 0}, {1, 0, 0}, {-r3, r3, -r3}, {0, r10, -3 * r10}, {-r2, r2, 0}}
	for a, want := range rows {
		got := make([]float64, 3)
		cols, vals := f.Row(a)
		for k, c := range cols {
			got[c] = vals[k]
		}
		for c := range want {
			if !(math.Abs(got[c]-want[c]) <= 1e-15) {
				t.Fatalf("premise: row %d = %v, want %v", a, got, want)
			}
		}
	}
	if got, want := f.KMeans(4, 1, 1, false), []int{0, 1, 2, 3, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("seed 1: labels %v, want %v (the run traced above)", got, want)
	}
	k := Matrix(f, false)
	for seed := uint64(0); seed < 100; seed++ {
		if a, b := f.KMeans(4, 1, seed, false), KernelKMeans(k, 4, 1, seed); !slices.Equal(a, b) {
			t.Errorf("seed %d: feature-space k-means %v, KernelKMeans %v", seed, a, b)
		}
	}
}

// TestTopEigenSmallScale: subspace iteration does not depend on the scale
// of the operator. diag(1, 2, …, 20)·10⁻⁸ has the eigenpairs (20·10⁻⁸,
// e_19) and (19·10⁻⁸, e_18), the same as diag(1, …, 20) scaled. Its images
// have squared norms near 10⁻¹⁴, so a dependence test relative to
// 1/‖column‖² instead of ‖column‖² (eigen.go:103:18, 1e-24*orig →
// 1e-24/orig) finds every column "numerically zero", replaces the block by
// e_0 … e_11 (p = 12) and returns their Rayleigh quotients 12·10⁻⁸ and
// 11·10⁻⁸, with zero residuals.
func TestTopEigenSmallScale(t *testing.T) {
	t.Parallel()
	d := make([]float64, 20)
	for i := range d {
		d[i] = 1e-8 * float64(i+1)
	}
	vals, vecs, err := topEigen(diagOp(d), 20, 2, 1e-10, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{20e-8, 19e-8} {
		if !(math.Abs(vals[k]-want) <= 1e-9*want) {
			t.Errorf("eigenvalue %d = %v, want %v", k, vals[k], want)
		}
		if x := math.Abs(vecs.At(19-k, k)); !(math.Abs(x-1) <= 1e-8) {
			t.Errorf("eigenvector %d has |x_%d| = %v, want 1", k, 19-k, x)
		}
	}
}
