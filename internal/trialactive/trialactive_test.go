package trialactive

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestEntropy: an equilateral triangle leaves all three answers equally
// likely (entropy log 3); two near points and a far one make the far one
// the almost sure odd one (entropy near 0).
func TestEntropy(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(6, 2, []float64{
		0, 0, 1, 0, 0.5, math.Sqrt(3) / 2, // equilateral
		0, 0, 0.01, 0, 100, 0, // two together, one far
	})
	if h := Entropy(x, 1, [3]int{0, 1, 2}); math.Abs(h-math.Log(3)) > 1e-12 {
		t.Errorf("equilateral entropy %g, want log 3 = %g", h, math.Log(3))
	}
	if h := Entropy(x, 1, [3]int{3, 4, 5}); h > 0.01 {
		t.Errorf("clear trial's entropy %g, want near 0", h)
	}
}

// TestChoose: the m trials chosen are the most uncertain of the
// candidates, in decreasing entropy, and each names three distinct items.
func TestChoose(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(1)
	x := triplet.Gaussian(rng, 40, 2, 1)
	const m, cands = 10, 400
	got := Choose(nil, triplet.NewRand(2), x, 1, m, cands)
	// The same candidates again, all scored.
	r := triplet.NewRand(2)
	var hs []float64
	for range cands {
		a, b, c := triplet.RandomQuestion(r, 40)
		hs = append(hs, Entropy(x, 1, [3]int{a, b, c}))
	}
	// The m-th largest candidate entropy.
	sorted := append([]float64(nil), hs...)
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			if sorted[j] > sorted[i] {
				sorted[i], sorted[j] = sorted[j], sorted[i]
			}
		}
	}
	if len(got) != m {
		t.Fatalf("%d trials, want %d", len(got), m)
	}
	prev := math.Inf(1)
	for k, it := range got {
		if it[0] == it[1] || it[0] == it[2] || it[1] == it[2] {
			t.Fatalf("trial %v repeats an item", it)
		}
		h := Entropy(x, 1, it)
		if h > prev || h < sorted[m-1] {
			t.Errorf("trial %d entropy %g: not in decreasing order or below the %d-th largest %g", k, h, m, sorted[m-1])
		}
		prev = h
	}
}

// TestRankEntropy: references all at the same distance from the query
// leave the first choice uniform (entropy log n); one reference at the
// query and the others far make it sure; ChooseRank keeps the most
// uncertain candidate.
func TestRankEntropy(t *testing.T) {
	t.Parallel()
	// Query 0 at the origin; items 1–4 on the unit circle; item 5 at the
	// query, items 6–8 far away.
	x := mat.NewDense(9, 2, []float64{0, 0, 1, 0, 0, 1, -1, 0, 0, -1, 0.001, 0, 50, 0, 0, 50, -50, 0})
	if h := RankEntropy(x, 1, 0, []int{1, 2, 3, 4}); math.Abs(h-math.Log(4)) > 1e-12 {
		t.Errorf("equidistant entropy %g, want log 4", h)
	}
	// α = 1: q = 1/(1 + d), each far reference keeps p ≈ 1/2501, so the
	// entropy is ≈ 3·(1/2501)·log 2501 + 0.0012 = .0106.
	if h := RankEntropy(x, 1, 0, []int{5, 6, 7, 8}); h > 0.02 {
		t.Errorf("clear trial's entropy %g", h)
	}
	rng := triplet.NewRand(3)
	got := ChooseRank(rng, x, 1, 0, 4, 50)
	if len(got) != 4 || slices.Contains(got, 0) {
		t.Fatalf("references %v", got)
	}
	// The best of 50 random 4-sets of the 8 other items: with 70 sets in
	// all, it is at least as uncertain as the worst one.
	if h := RankEntropy(x, 1, 0, got); h < RankEntropy(x, 1, 0, []int{5, 6, 7, 8}) {
		t.Errorf("chosen entropy %g", h)
	}
}
