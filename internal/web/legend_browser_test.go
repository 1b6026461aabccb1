package web_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
)

// TestBrowserDashboardBandAndLegend: in Chromium, the per-run learning
// curve's interval band is laid out with a height, its legend entry and
// the dendrogram's colour legend are drawn inside their pictures (not cut
// off at the right edge), one dendrogram legend swatch per cluster.
func TestBrowserDashboardBandAndLegend(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a, _ := newJobsApp(t, false)
	ctx := context.Background()
	st, _, err := studyfile.ImportTriplets(ctx, a.store, studyfile.TripletsInput{Slug: "bands", Title: "Bands", CSV: bytes.NewReader(lineTriplets(24, 1500, 15, 41))})
	if err != nil {
		t.Fatal(err)
	}
	rs := study.DefaultRecomputeSettings()
	rs.Clusters, rs.Trust = 3, study.TrustSettings{}
	if err := a.store.SetRecomputeSettings(ctx, st.ID, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, 1280, 1000)
	if err := chromedp.Do(bctx, adminLogin(t, a, "/admin/studies/bands/dashboard"), chromedp.WaitVisible(`#learning svg`)); err != nil {
		t.Fatal(err)
	}
	type drawn struct {
		BandHeight   float64 `json:"bandHeight"`
		BandLegend   bool    `json:"bandLegend"`
		TreeLegend   int     `json:"treeLegend"`
		TreeSwatches int     `json:"treeSwatches"`
		Outside      int     `json:"outside"`
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[drawn](`(() => {
		const inside = (svg, el) => { const b = el.getBBox(); return b.x >= 0 && b.x + b.width <= svg.viewBox.baseVal.width + 0.5 };
		const curve = document.querySelector("#learning svg"), tree = document.querySelector("#dendrogram svg");
		const band = curve.querySelector("path.band.s1");
		const legends = Array.from(curve.querySelectorAll("text.legend")).concat(Array.from(tree.querySelectorAll("text.legend")));
		const outside = legends.filter(t => !inside(t.ownerSVGElement, t)).length;
		return {
			bandHeight: band ? band.getBBox().height : 0,
			bandLegend: Array.from(curve.querySelectorAll("text.legend")).some(t => t.textContent === "held-out error (95% interval)"),
			treeLegend: Array.from(tree.querySelectorAll("text.legend")).filter(t => /^cluster \d+$/.test(t.textContent)).length,
			treeSwatches: tree.querySelectorAll("rect.swatch").length,
			outside: outside,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.BandHeight <= 0 || !got.BandLegend {
		t.Errorf("the learning curve's band: %g px tall, legend entry %v", got.BandHeight, got.BandLegend)
	}
	if got.TreeLegend != 3 || got.TreeSwatches != 3 {
		t.Errorf("the dendrogram's legend: %d cluster entries, %d swatches; want 3 each", got.TreeLegend, got.TreeSwatches)
	}
	if got.Outside != 0 {
		t.Errorf("%d legend texts run out of their picture", got.Outside)
	}
}
