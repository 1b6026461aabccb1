package plot_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/triplet"
)

// dotXs are the x pixel positions of a scatter's dots (not its rings).
func dotXs(t *testing.T, svg string) []float64 {
	t.Helper()
	var xs []float64
	for _, m := range regexp.MustCompile(`<g class="pt"><title>[^<]*</title><circle cx="([0-9.-]+)"`).FindAllStringSubmatch(svg, -1) {
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	return xs
}

// TestScatterRobustView: one item a thousand times farther out than the
// rest squashes a plain scatter (the other 40 dots within a few pixels);
// the robust view keeps the 40 spread over the plot, draws the outlier
// as a ring at the edge with its coordinates in its title, and says so.
// Axis labels and the legend (cluster colours, frames, ellipses) are
// drawn, outside the pan group so that they stay put while zooming.
func TestScatterRobustView(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(3)
	var pts []plot.Point
	for i := range 40 {
		pts = append(pts, plot.Point{X: rng.NormFloat64(), Y: rng.NormFloat64(), Label: "p" + strconv.Itoa(i), Cluster: i % 2})
	}
	pts = append(pts, plot.Point{X: 1000, Y: 0, Label: "far", Cluster: 0})
	spread := func(xs []float64) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		return hi - lo
	}
	plain := plot.Scatter(pts, 600, 400, true, "plain")
	xsPlain := dotXs(t, plain)
	if len(xsPlain) != 41 || spread(xsPlain[:40]) > 10 {
		t.Fatalf("plain: %d dots, the cloud spans %.1f px (the test expects it squashed)", len(xsPlain), spread(xsPlain[:40]))
	}
	opt := plot.ScatterOptions{XLabel: "dimension 1", YLabel: "dimension 2", Robust: true,
		Legend: append(plot.ClusterLegend(2, "dot"), plot.LegendEntry{Color: "#888", Text: "90% of refits", Kind: "ellipse"})}
	svg := plot.ScatterWith(pts, 600, 400, true, "robust", opt)
	xs := dotXs(t, svg)
	if len(xs) != 40 || spread(xs) < 200 {
		t.Errorf("robust: %d dots spanning %.1f px, want 40 over most of the plot", len(xs), spread(xs))
	}
	if n := strings.Count(svg, `<g class="pt outside">`); n != 1 || !strings.Contains(svg, "far: outside the view, at (1000, 0)") {
		t.Errorf("%d outside rings", n)
	}
	if !strings.Contains(svg, "1 item lies outside the view") {
		t.Error("no note of the item outside")
	}
	pan := strings.Index(svg, `<g class="pan">`)
	for _, want := range []string{">dimension 1<", ">dimension 2<", ">cluster 1<", ">cluster 2<", ">90% of refits<", `<path class="swatch ellipse"`} {
		i := strings.Index(svg, want)
		if i < 0 || i > pan {
			t.Errorf("%q missing or inside the pan group", want)
		}
	}
	// No outlier: the robust view shows every point.
	if svg := plot.ScatterWith(pts[:40], 600, 400, true, "r", opt); strings.Contains(svg, "outside") {
		t.Error("a cloud without outliers has points outside the view")
	}
	if l := plot.ClusterLegend(12, "frame"); len(l) != 1 || !strings.Contains(l[0].Text, "12") {
		t.Errorf("legend of 12 clusters %+v", l)
	}
}
