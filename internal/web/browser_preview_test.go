package web_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// shownBanner returns the text of the page's preview banner, "" when the
// page has none or it is not displayed.
func shownBanner(b context.Context, t *testing.T) string {
	t.Helper()
	text, err := chromedp.Run(b, chromedp.Evaluate[string](`(() => {
		const e = document.querySelector("main #preview-banner");
		return e && e.offsetParent !== null && e.getBoundingClientRect().height > 0 ? e.textContent : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// A researcher in Chromium logs in, opens a draft Prolific study's page
// and clicks "Preview as a participant": the question page shows the
// preview banner, the next question (brought in by app.js in the answer's
// reply) and the done page still do, and the study page then marks the
// preview's row. Runs with CLOSER_BROWSER=1.
func TestBrowserPreviewBanner(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.previewStudy("pv", study.Platform{Kind: study.PlatformProlific, CompletionCode: "PROLIFIC-DONE"})

	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b,
		adminLogin(t, a, "/admin/studies/pv"),
		chromedp.WaitVisible(`#start-preview`),
		chromedp.Click(`#start-preview`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		if banner := shownBanner(b, t); !strings.Contains(banner, previewBanner) {
			t.Fatalf("question %d: the banner shown says %q, want %q", i+1, banner, previewBanner)
		}
		if err := chromedp.Do(b, chromedp.Click(`form.question button[data-key="1"]`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	if err := chromedp.Do(b, chromedp.WaitVisible(`#completion-code`)); err != nil {
		t.Fatalf("no done page: %v", err)
	}
	if banner := shownBanner(b, t); !strings.Contains(banner, previewBanner) {
		t.Fatalf("the done page's banner shown says %q, want %q", banner, previewBanner)
	}
	if err := chromedp.Do(b,
		chromedp.Click(`#preview-banner a`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#delete-previews`),
		chromedp.WaitVisible(`tr.preview-row .preview-note`),
	); err != nil {
		t.Fatalf("back on the study page: %v", err)
	}
	if n := a.count(`SELECT count(*) FROM answers a JOIN participants p ON p.id = a.participant_id WHERE p.preview`); n != 3 {
		t.Fatalf("the preview stored %d answers, want 3", n)
	}
}
