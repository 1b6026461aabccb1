package kernel

import (
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// kendallTauBrute is the O(n²) definition of tau-b (Jiao & Vert 2016,
// section 8): (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2)), 0 when the
// denominator is 0.
func kendallTauBrute(x, y []float64) float64 {
	n := len(x)
	var nc, nd, n1, n2 float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			sx := sign(x[i] - x[j])
			sy := sign(y[i] - y[j])
			if sx == 0 {
				n1++
			}
			if sy == 0 {
				n2++
			}
			switch {
			case sx*sy > 0:
				nc++
			case sx*sy < 0:
				nd++
			}
		}
	}
	n0 := float64(n) * float64(n-1) / 2
	den := math.Sqrt((n0 - n1) * (n0 - n2))
	if den == 0 {
		return 0
	}
	return (nc - nd) / den
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func TestKendallTauFigure1(t *testing.T) {
	t.Parallel()
	// Kleindessner & von Luxburg 2017, Figure 1 (left): the rankings
	// x1 ≺ x3 ≺ x2 ≺ x4 ≺ x5 ≺ x6 ≺ x7 and x2 ≺ x3 ≺ x6 ≺ x1 ≺ x5 ≺ x4 ≺ x7
	// have Kendall tau 1/3 (stated in the caption). Position of item i:
	a := []float64{1, 3, 2, 4, 5, 6, 7}
	b := []float64{4, 1, 2, 6, 5, 3, 7}
	if got := KendallTau(a, b); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("KendallTau = %v, want 1/3", got)
	}
	if got := KendallTau(a, a); math.Abs(got-1) > 1e-12 {
		t.Errorf("KendallTau(a, a) = %v, want 1", got)
	}
	rev := make([]float64, len(a))
	for i, v := range a {
		rev[i] = -v
	}
	if got := KendallTau(a, rev); math.Abs(got+1) > 1e-12 {
		t.Errorf("KendallTau(a, -a) = %v, want -1", got)
	}
}

func TestKendallTauBrute(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(1)
	for trial := 0; trial < 500; trial++ {
		n := rng.IntN(40)
		levels := 1 + rng.IntN(8) // few levels: many ties
		if trial%5 == 0 {
			levels = 1000000 // practically no ties
		}
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(levels))
			y[i] = float64(rng.IntN(levels))
		}
		got, want := KendallTau(x, y), kendallTauBrute(x, y)
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: KendallTau(%v, %v) = %v, brute force %v", trial, x, y, got, want)
		}
		if sym := KendallTau(y, x); math.Abs(sym-got) > 1e-12 {
			t.Fatalf("trial %d: not symmetric: %v vs %v", trial, got, sym)
		}
	}
}

func TestKendallTauEdge(t *testing.T) {
	t.Parallel()
	if got := KendallTau(nil, nil); got != 0 {
		t.Errorf("empty: %v", got)
	}
	if got := KendallTau([]float64{1, 1, 1}, []float64{1, 2, 3}); got != 0 {
		t.Errorf("constant x: %v, want 0 (0/0 = 0)", got)
	}
	if got := KendallTau([]float64{1, math.NaN()}, []float64{1, 2}); !math.IsNaN(got) {
		t.Errorf("NaN input: %v, want NaN", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	KendallTau([]float64{1}, []float64{1, 2})
}

func BenchmarkKendallTau1M(b *testing.B) {
	rng := triplet.NewRand(2)
	n := 1000000
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = x[i] + rng.NormFloat64()
	}
	b.ResetTimer()
	for b.Loop() {
		KendallTau(x, y)
	}
}

// TestMallowsLambdaRange: λ = 0 is allowed (Theorem 1 of Jiao & Vert 2016
// holds for every λ ≥ 0) and gives exp(0) = 1 for any pair of rankings;
// λ < 0 and NaN panic.
func TestMallowsLambdaRange(t *testing.T) {
	t.Parallel()
	x, y := []float64{1, 2, 3}, []float64{3, 2, 1} // n_d = 3
	func() {
		defer func() {
			if e := recover(); e != nil {
				t.Errorf("Mallows with λ = 0 panicked: %v", e)
			}
		}()
		if got := Mallows(x, y, 0); got != 1 {
			t.Errorf("Mallows with λ = 0 = %v, want 1", got)
		}
	}()
	if got, want := Mallows(x, y, 0.5), math.Exp(-1.5); !(math.Abs(got-want) <= 1e-15) {
		t.Errorf("Mallows with λ = 0.5 = %v, want exp(−0.5·3)", got)
	}
	for _, l := range []float64{-0.1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Mallows with λ = %v did not panic", l)
				}
			}()
			Mallows(x, y, l)
		}()
	}
}
