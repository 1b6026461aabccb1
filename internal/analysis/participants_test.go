package analysis

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

func TestParticipantQuality(t *testing.T) {
	t.Parallel()
	T := func(a, b, c int) triplet.Triplet { return triplet.Triplet{Anchor: a, Closer: b, Farther: c} }
	L, R, U := SideLeft, SideRight, SideUnknown
	answers := []Answer{
		// participant 0: agrees with the others, answers (0;1,2) twice the same way; chose left, left, right.
		{0, T(0, 1, 2), 3000, L}, {0, T(0, 1, 2), 2500, L}, {0, T(3, 1, 2), 400, R},
		// participant 1: contradicts itself on (0;1,2) and goes against the majority on (3;1,2); always left.
		{1, T(0, 1, 2), 900, L}, {1, T(0, 2, 1), 800, L}, {1, T(3, 2, 1), 5000, L},
		// participant 2: the majority on (3;1,2) with participant 0; no response times, no sides.
		{2, T(3, 1, 2), -1, U}, {2, T(0, 1, 2), -1, U},
	}
	// Points on a line: 0 at 0, 1 at 1, 2 at 3, 3 at 0.5. Satisfied: (0;1,2), (3;1,2).
	x := mat.NewDense(4, 1, []float64{0, 1, 3, 0.5})
	q := ParticipantQuality(answers, 1000, x)
	if len(q) != 3 {
		t.Fatalf("%d participants", len(q))
	}
	check := func(name string, got, want float64) {
		t.Helper()
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-12) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// participant 0 (worked out by hand from the answers above)
	check("p0 median", q[0].MedianResponseMS, 2500)
	check("p0 fast", q[0].FastShare, 1.0/3)
	check("p0 self", q[0].SelfContradiction, 0)
	// others on (0;1,2): p1 1 vs 1, p2 1 vs 0 → 2 vs 1 majority J; on (3;1,2): p1 K, p2 J → tie.
	check("p0 majority", q[0].MajorityDisagreement, 0)
	check("p0 embedding", q[0].EmbeddingAgreement, 1)
	// participant 1
	check("p1 median", q[1].MedianResponseMS, 900)
	check("p1 fast", q[1].FastShare, 2.0/3)
	check("p1 self", q[1].SelfContradiction, 1)
	// others on (0;1,2): 3 J vs 0 → against once (the (0;2,1) answer); on (3;1,2): 2 J → against.
	check("p1 majority", q[1].MajorityDisagreement, 2.0/3)
	check("p1 embedding", q[1].EmbeddingAgreement, 1.0/3)
	// participant 2
	check("p2 median", q[2].MedianResponseMS, math.NaN())
	check("p2 fast", q[2].FastShare, math.NaN())
	check("p2 self", q[2].SelfContradiction, math.NaN())
	check("p2 embedding", q[2].EmbeddingAgreement, 1)
	// left share: 2 of 3, 3 of 3, none known
	check("p0 left", q[0].LeftShare, 2.0/3)
	check("p1 left", q[1].LeftShare, 1)
	check("p2 left", q[2].LeftShare, math.NaN())
	if q := ParticipantQuality(answers, 1000, nil); !math.IsNaN(q[0].EmbeddingAgreement) {
		t.Error("embedding agreement without an embedding")
	}
}

func TestNeighbours(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(5, 1, []float64{0, 10, 1, 3, 11})
	nb := NeighboursByDistance(x, 2)
	want := [][]int{{2, 3}, {4, 3}, {0, 3}, {2, 0}, {1, 3}}
	for i := range want {
		for r := range want[i] {
			if nb[i][r] != want[i][r] {
				t.Fatalf("neighbours %v, want %v", nb, want)
			}
		}
	}
	// The linear kernel's induced distance is the squared Euclidean one.
	K := mat.NewSymDense(5, nil)
	for i := range 5 {
		for j := range 5 {
			K.SetSym(i, j, x.At(i, 0)*x.At(j, 0))
		}
	}
	nk := NeighboursBySimilarity(K, 2)
	for i := range want {
		for r := range want[i] {
			if nk[i][r] != want[i][r] {
				t.Fatalf("kernel neighbours %v, want %v", nk, want)
			}
		}
	}
}
