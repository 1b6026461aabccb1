package web_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
)

// TestBrowserDashboardTrust opens, in headless Chromium, the dashboard of a
// study of 36 items on a line recomputed with small trust settings and
// checks what a researcher sees: the Dimensions section with its plot and
// the suggested d = 1, one ellipse per item drawn with a positive size on
// the embedding, the gallery's stability column filled, and the projection
// sentence. It runs when CLOSER_BROWSER=1 (needs chromium).
func TestBrowserDashboardTrust(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a, _ := newJobsApp(t, false)
	ctx := context.Background()
	st, _, err := studyfile.ImportTriplets(ctx, a.store, studyfile.TripletsInput{Slug: "line", Title: "Line", CSV: bytes.NewReader(lineTriplets(36, 3000, 30, 28))})
	if err != nil {
		t.Fatal(err)
	}
	rs := study.DefaultRecomputeSettings()
	rs.Trust = study.TrustSettings{MaxDim: 3, Folds: 5, Bootstrap: 20, Project: true}
	if err := a.store.SetRecomputeSettings(ctx, st.ID, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, 1280, 1000)
	if err := chromedp.Do(bctx, adminLogin(t, a, "/admin/studies/line/dashboard"), chromedp.WaitVisible(`#dimensions`)); err != nil {
		t.Fatal(err)
	}
	summary, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#dimensions-summary").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "Suggested: d = 1,") {
		t.Errorf("dimensions summary %q", summary)
	}
	// Ellipses with a box of positive size as the browser lays them out.
	drawn, err := chromedp.Run(bctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("#embedding ellipse.spread")).filter(e => { const b = e.getBBox(); return b.width > 0 && b.height > 0 }).length`))
	if err != nil {
		t.Fatal(err)
	}
	if drawn != 36 {
		t.Errorf("%d ellipses drawn with a size, want 36", drawn)
	}
	cells, err := chromedp.Run(bctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("table.gallery td.stability span")).filter(s => /^\d+%$/.test(s.innerText)).length`))
	if err != nil {
		t.Fatal(err)
	}
	if cells != 20*5 { // the gallery's first page: 20 items of 5 neighbours
		t.Errorf("%d neighbour stabilities shown, want 100", cells)
	}
	sentence, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#projection-sentence").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sentence, "more answers") && !strings.Contains(sentence, "levelled off") {
		t.Errorf("projection sentence %q", sentence)
	}
}
