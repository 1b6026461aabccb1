package web

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/dashboard"
)

// TestArmCurvesSVG: the glue from the arms' curves to internal/plot draws
// one line per arm in its own class (a0, a1, …), a marker per point of the
// arm whose title names the arm, its error and its answers, and a legend
// entry for every arm, even one without points.
func TestArmCurvesSVG(t *testing.T) {
	t.Parallel()
	svg := armCurvesSVG([]dashboard.ArmCurve{
		{Arm: 0, Answers: []int{100, 300, 500}, Error: []float64{0.4, 0.2, 0.1}, Heldout: []int{20, 40, 50}},
		{Arm: 1, Answers: []int{120, 260}, Error: []float64{0.5, 0.3}, Heldout: []int{20, 50}},
		{Arm: 2},
	}, []string{"smart", "a < b", "late"})
	for sub, n := range map[string]int{
		`<circle class="marker a0"`: 3, `<circle class="marker a1"`: 2, `<circle class="marker a2"`: 0,
		`<path class="series a2"`: 2, // its empty line and its legend swatch
		`class="legend"`:          3, "<title>smart: 0.2 at 300</title>": 1, "<title>a &lt; b: 0.3 at 260</title>": 1,
		">late</text>": 1, "the arm&#39;s answers": 1, `viewBox="0 0 880 320"`: 1,
	} {
		if got := strings.Count(svg, sub); got != n {
			t.Errorf("%q occurs %d times, want %d", sub, got, n)
		}
	}
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("not well-formed XML: %v", err)
			}
			break
		}
	}
}
