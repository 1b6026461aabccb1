package embed

import (
	"math"
	"testing"
)

// TestQuantileInf: +Inf values (a learning curve's "never") give an end
// of +Inf or a finite one, never NaN, and NaNs are left out; finite
// values interpolate as type 7.
func TestQuantileInf(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	cases := []struct {
		v         []float64
		level     float64
		lo, hi    float64
		wantNaNLo bool
	}{
		{[]float64{1, inf}, 1, 1, inf, false},
		{[]float64{2, 1, inf, inf, math.NaN()}, 1, 1, inf, false},
		{[]float64{1, 2, 3, 4, 5}, 0.5, 2, 4, false},
		{[]float64{math.NaN()}, 0.5, 0, 0, true},
	}
	for _, c := range cases {
		lo, hi := Percentiles(c.v, c.level)
		if c.wantNaNLo {
			if !math.IsNaN(lo) || !math.IsNaN(hi) {
				t.Errorf("Percentiles(%v) = %v, %v, want NaN", c.v, lo, hi)
			}
			continue
		}
		if lo != c.lo || hi != c.hi {
			t.Errorf("Percentiles(%v, %g) = %v, %v, want %v, %v", c.v, c.level, lo, hi, c.lo, c.hi)
		}
	}
	if q := Quantile([]float64{1, inf}, 0); q != 1 {
		t.Errorf("Quantile([1 +Inf], 0) = %v, want 1", q)
	}
}
