package web_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/studyfile"
)

// TestTrustScreenshots imports the strange-fruit crowd file (20,086
// answers of 416 participants on 30 items whose truth is one-dimensional),
// runs one recompute with the default settings and photographs the
// dashboard's Dimensions, Uncertainty and How many more answers sections
// and the embedding with its ellipses in headless Chromium. It runs only
// when CLOSER_SCREENSHOTS names a directory (needs chromium):
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/web -run TestTrustScreenshots -v
func TestTrustScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLOSER_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CLOSER_SCREENSHOTS to a directory to take the screenshots (needs chromium)")
	}
	a, _ := newJobsApp(t, false)
	ctx := context.Background()
	fruit, _, err := studyfile.ImportTriplets(ctx, a.store, studyfile.TripletsInput{Slug: "strange-fruit", Title: "Strange fruit (2015 crowd)", CSV: bytes.NewReader(strangeFruit(t))})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := recompute.Run(ctx, a.store, fruit.ID, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("recompute with the default trust settings: %.1f s", time.Since(start).Seconds())
	bctx := newBrowser(t, 1280, 1000)
	err = chromedp.Do(bctx,
		adminLogin(t, a, "/admin/studies/strange-fruit/dashboard"),
		chromedp.WaitVisible(`#dimensions`),
		chromedp.Sleep(300*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, sel := range map[string]string{"screenshot-trust-dimensions.png": `#dimensions`, "screenshot-trust-uncertainty.png": `#uncertainty`,
		"screenshot-trust-projection.png": `#projection`, "screenshot-trust-embedding.png": `#embedding`} {
		png, err := chromedp.Run(bctx, chromedp.Screenshot(sel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
