package web_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
)

// TestDashboardScreenshots imports the strange-fruit crowd file (labels,
// no images) and a demo-disk study with simulated answers (images), runs one
// recompute on each, and photographs both dashboards in headless Chromium.
// It runs only when CLOSER_SCREENSHOTS names a directory (needs chromium):
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/web -run TestDashboardScreenshots
func TestDashboardScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLOSER_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CLOSER_SCREENSHOTS to a directory to take the screenshots (needs chromium)")
	}
	data := strangeFruit(t)
	a, _ := newJobsApp(t, false) // the recompute buttons show; the runs below are direct
	ctx := context.Background()
	fruit, _, err := studyfile.ImportTriplets(ctx, a.store, studyfile.TripletsInput{Slug: "strange-fruit", Title: "Strange fruit (2015 crowd)", CSV: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, fruit.ID, 0); err != nil {
		t.Fatal(err)
	}

	// Demo disks answered by their true hue and size, with a little noise.
	st := a.study("disks", 40, 60, study.StatusOpen)
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		return math.Hypot((coords[i][0]-coords[j][0])/270, (coords[i][1]-coords[j][1])/54)
	}
	for p := range 12 {
		j := a.join("disks", fmt.Sprintf(`{"external_id": "sim-%d"}`, p))
		for i := range 60 {
			var n nextResp
			a.api("GET", "/api/v1/studies/disks/next", j.Token, "", &n)
			closer := n.Left.Index
			if dist(n.Anchor.Index, n.Right.Index) < dist(n.Anchor.Index, n.Left.Index) {
				closer = n.Right.Index
			}
			if (p == 11 && i%2 == 0) || (p+i)%13 == 0 { // one careless participant, a little noise
				closer = n.Left.Index + n.Right.Index - closer
			}
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": %d}`, n.QuestionID, closer, 600+(i*397+p*211)%3500)
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
		if p%4 == 3 { // learning curve: a run every four participants
			if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	bctx := newBrowser(t, 1280, 1000)
	err = chromedp.Do(bctx,
		adminLogin(t, a, "/admin/studies/strange-fruit/dashboard"),
		chromedp.WaitVisible(`#embedding`),
		chromedp.Sleep(300*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	fruitPNG, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		chromedp.Navigate(a.srv.URL+"/admin/studies/disks/dashboard"),
		chromedp.WaitVisible(`#embedding`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Lazy gallery images below the fold load only when scrolled to.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("img[loading=lazy]").forEach(i => i.loading = "eager"); 0`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		pollJS(`Array.from(document.images).every(i => i.complete)`),
		chromedp.Sleep(800*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	disksPNG, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	for name, png := range map[string][]byte{"screenshot-dashboard-fruit.png": fruitPNG, "screenshot-dashboard-disks.png": disksPNG} {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
