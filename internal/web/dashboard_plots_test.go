package web

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/study"
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

// TestLearningPlotBand: the per-run learning curve shades each run's 95%
// Wilson interval of its held-out error on its held-out answers (the
// arms' curves' method): the band spans every marker, each point's band
// is as tall as its Wilson interval on the plot's one scale (a run judged
// on fewer held-out answers has the wider one), the legend says so, and a
// run stored without its held-out count (before migration 000042) is left
// out of the band; with no counts at all there is no band.
func TestLearningPlotBand(t *testing.T) {
	t.Parallel()
	f := func(x float64) *float64 { return &x }
	c := func(n int) *int { return &n }
	runs := []study.Run{
		{Status: study.RunDone, Answers: 500, HeldoutError: f(0.30), TrainError: f(0.2), HeldoutAnswers: c(50)},
		{Status: study.RunDone, Answers: 1000, HeldoutError: f(0.22), TrainError: f(0.15)}, // no count: no interval
		{Status: study.RunFailed, Answers: 1200},
		{Status: study.RunDone, Answers: 2000, HeldoutError: f(0.15), TrainError: f(0.1), HeldoutAnswers: c(400)},
	}
	svg := componentHTML(t, learningPlot(runs).SVG)
	if !strings.Contains(svg, ">held-out error (95% interval)<") || strings.Count(svg, `<path class="band s1"`) != 1 || strings.Contains(svg, `class="band s2"`) {
		t.Fatalf("no band or legend of the held-out error: %s", svg)
	}
	band := regexp.MustCompile(`<path class="band s1" d="M([^"]+)Z"`).FindStringSubmatch(svg)[1]
	var pts [][2]float64
	for _, p := range strings.Split(band, "L") {
		var x, y float64
		if _, err := fmt.Sscanf(p, "%g %g", &x, &y); err != nil {
			t.Fatalf("band point %q: %v", p, err)
		}
		pts = append(pts, [2]float64{x, y})
	}
	if len(pts) != 4 { // two runs with counts: up along High, back along Low
		t.Fatalf("band %q: %d points, want 4", band, len(pts))
	}
	var markers [][2]float64
	for _, m := range regexp.MustCompile(`<circle class="marker s1" cx="([0-9.]+)" cy="([0-9.]+)"`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		markers = append(markers, [2]float64{x, y})
	}
	if len(markers) != 3 {
		t.Fatalf("%d held-out markers, want 3", len(markers))
	}
	// Point k of the band: pts[k] on High, pts[3-k] on Low (y grows down).
	heights := make([]float64, 2)
	for k, m := range []([2]float64){markers[0], markers[2]} {
		top, bottom := pts[k], pts[3-k]
		if top[0] != m[0] || bottom[0] != m[0] || !(top[1] < m[1] && m[1] < bottom[1]) {
			t.Errorf("point %d: band %v–%v does not span the marker %v", k, top, bottom, m)
		}
		heights[k] = bottom[1] - top[1]
	}
	lo0, hi0 := dashboard.Wilson(15, 50, dashboard.Z95)
	lo1, hi1 := dashboard.Wilson(60, 400, dashboard.Z95)
	if got, want := heights[0]/heights[1], (hi0-lo0)/(hi1-lo1); math.Abs(got-want) > 0.05*want {
		t.Errorf("band heights %v: ratio %.3f, want the Wilson intervals' %.3f", heights, got, want)
	}

	for i := range runs {
		runs[i].HeldoutAnswers = nil
	}
	svg = componentHTML(t, learningPlot(runs).SVG)
	if strings.Contains(svg, "band") || strings.Contains(svg, "95% interval") || !strings.Contains(svg, ">held-out error<") {
		t.Errorf("runs without held-out counts: want no band and the plain legend: %s", svg)
	}
}

// componentHTML renders c.
func componentHTML(t *testing.T, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
