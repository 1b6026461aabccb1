package plot_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/plot"
)

// TestLinesBand: a series with Low and High gets one shaded band of its
// class, drawn before (under) its line, whose upper edge runs through the
// High values and lower edge through the Low ones (the axes widen to
// hold the band: the band's top is the plot's highest point); a series
// without them gets none, and NoMarkers drops the markers.
func TestLinesBand(t *testing.T) {
	t.Parallel()
	s := plot.Series{X: []float64{0, 1, 2}, Y: []float64{0.3, 0.2, 0.15}, Low: []float64{0.25, 0.15, 0.1}, High: []float64{0.4, 0.26, 0.2},
		Class: "s1", Legend: "measured"}
	fit := plot.Series{X: []float64{0, 2}, Y: []float64{0.29, 0.16}, Class: "s2", Legend: "fitted", NoMarkers: true}
	svg := plot.Lines([]plot.Series{s, fit}, 400, 200, "answers", "held-out error", false, "curve")
	bands := regexp.MustCompile(`<path class="band (\w+)" d="M([^"]*)Z">`).FindAllStringSubmatch(svg, -1)
	if len(bands) != 1 || bands[0][1] != "s1" {
		t.Fatalf("bands %q, want one of class s1", bands)
	}
	if b, l := strings.Index(svg, `class="band s1"`), strings.Index(svg, `class="series s1"`); b > l {
		t.Error("the band is drawn over its line")
	}
	var ys []float64
	for _, pt := range strings.Split(bands[0][2], "L") {
		f := strings.Fields(pt)
		y, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		ys = append(ys, y)
	}
	if len(ys) != 6 {
		t.Fatalf("band of %d vertices, want 6 (3 up, 3 back)", len(ys))
	}
	// SVG y grows downwards: the upper edge (first 3) is above the lower
	// edge (last 3, reversed) at every x, and the highest High (0.4) is
	// at the top of the plot area's 5% headroom, not clipped.
	for k := range 3 {
		if !(ys[k] < ys[5-k]) {
			t.Errorf("at point %d the band's top %g is not above its bottom %g", k, ys[k], ys[5-k])
		}
	}
	if ys[0] < 12 {
		t.Errorf("the band's top %g is above the plot area (the axes do not hold the band)", ys[0])
	}
	if n := strings.Count(svg, `<circle class="marker s2"`); n != 0 {
		t.Errorf("%d markers on a series without markers", n)
	}
	if n := strings.Count(svg, `<circle class="marker s1"`); n != 3 {
		t.Errorf("%d markers on the measured series, want 3", n)
	}
	if strings.Contains(plot.Lines([]plot.Series{fit}, 400, 200, "x", "y", false, "c"), `class="band`) {
		t.Error("a band without Low and High")
	}
}
