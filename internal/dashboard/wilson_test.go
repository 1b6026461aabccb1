package dashboard

import (
	"math"
	"testing"
)

// TestWilson: the interval of known cases (Brown, Cai and DasGupta 2001's
// formula; 50 of 100 is the textbook [0.4038, 0.5962]), never empty at 0 wrong, within [0, 1], and
// narrower with more answers.
func TestWilson(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		wrong, n int
		lo, hi   float64
	}{
		{23, 101, 0.1568, 0.3186},
		{0, 20, 0, 0.1611},
		{20, 20, 0.8389, 1},
		{50, 100, 0.4038, 0.5962},
	} {
		lo, hi := Wilson(c.wrong, c.n, Z95)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.wrong, c.n, lo, hi, c.lo, c.hi)
		}
	}
	lo1, hi1 := Wilson(20, 100, Z95)
	lo2, hi2 := Wilson(200, 1000, Z95)
	if !(hi2-lo2 < hi1-lo1) || !(lo1 < 0.2 && 0.2 < hi1) {
		t.Errorf("[%g, %g] at 100, [%g, %g] at 1000", lo1, hi1, lo2, hi2)
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("no answers: [%g, %g]", lo, hi)
	}
}
