package plot

import (
	"math"
	"strings"
	"testing"
)

// TestEllipse: the ellipse of a covariance is its eigen-decomposition;
// expected values by hand: diag(4, 1) has semi-axes 2 and 1 along x;
// [[2.5, 1.5], [1.5, 2.5]] has eigenvalues 4 and 1 with the first
// eigenvector at 45°.
func TestEllipse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cov         [3]float64
		rx, ry, deg float64
	}{
		{[3]float64{4, 0, 1}, 2, 1, 0},
		{[3]float64{1, 0, 4}, 2, 1, 90},
		{[3]float64{2.5, 1.5, 2.5}, 2, 1, 45},
		{[3]float64{2.5, -1.5, 2.5}, 2, 1, -45},
	} {
		rx, ry, deg := ellipse(c.cov, 1)
		if math.Abs(rx-c.rx) > 1e-12 || math.Abs(ry-c.ry) > 1e-12 || math.Abs(deg-c.deg) > 1e-9 {
			t.Errorf("ellipse(%v) = %v, %v, %v°; want %v, %v, %v°", c.cov, rx, ry, deg, c.rx, c.ry, c.deg)
		}
	}
	// √χ²₂(0.9): P(‖z‖ ≤ k) = 1 − exp(−k²/2) for a 2-D standard normal.
	if p := 1 - math.Exp(-SpreadScale*SpreadScale/2); math.Abs(p-0.9) > 1e-12 {
		t.Errorf("SpreadScale covers %v", p)
	}
}

// TestScatterSpread: a point with a spread gets an ellipse, the others
// none; ErrorBars rings the marked point only.
func TestScatterSpread(t *testing.T) {
	t.Parallel()
	svg := Scatter([]Point{{X: 0, Y: 0, Label: "a", Spread: true, Cov: [3]float64{0.01, 0, 0.04}}, {X: 1, Y: 1, Label: "b"}}, 400, 300, false, "test")
	if n := strings.Count(svg, "<ellipse"); n != 1 {
		t.Errorf("%d ellipses, want 1", n)
	}
	eb := ErrorBars([]ErrorPoint{{1, 0.3, 0.01}, {2, 0.2, 0.01}, {3, 0.21, math.NaN()}}, 2, "suggested", 400, 200, "d", "error", "test")
	if strings.Count(eb, `class="mark"`) != 1 || strings.Count(eb, `class="errbar"`) != 2 || !strings.Contains(eb, "suggested") {
		t.Errorf("error bars: %s", eb)
	}
}
