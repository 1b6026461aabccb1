package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// TestBrowserStudyEstimate fills the study page's "How many answers" form
// of a draft study in headless Chromium (a pay rate of 12 GBP an hour, 6 s
// a question) and presses "Save and estimate": the page comes back with
// the estimate in participants, minutes and pay, what it assumed, and the
// simulated curve whose band is laid out with a size and shaded (the
// dashboard's stylesheet applies: not an opaque fill). It runs when
// CLOSER_BROWSER=1 (needs chromium).
func TestBrowserStudyEstimate(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.study("est", 20, 30, study.StatusDraft)
	bctx := newBrowser(t, 1280, 1000)
	if err := chromedp.Do(bctx, adminLogin(t, a, "/admin/studies/est"), chromedp.WaitVisible(`#estimate`),
		chromedp.SetValue(`input[name="pay_per_hour"]`, "12"),
		chromedp.SetValue(`input[name="currency"]`, "GBP"),
		chromedp.SetValue(`input[name="seconds_per_question"]`, "6"),
		chromedp.Click(`#estimate-run`),
		chromedp.WaitVisible(`#estimate-sentence`)); err != nil {
		t.Fatal(err)
	}
	sentence, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#estimate-sentence").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"About ", "participants at 30 questions each, about 3 minutes each", "GBP in pay at the study's rate of 12.00 GBP an hour"} {
		if !strings.Contains(sentence, want) {
			t.Errorf("estimate %q lacks %q", sentence, want)
		}
	}
	assumed, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#estimate-assumed").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(assumed, "10% wrong answers") || !strings.Contains(assumed, "d = 2") {
		t.Errorf("assumptions %q", assumed)
	}
	band, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => { const b = document.querySelector("#estimate-plot path.band"); if (!b) return "none"; const r = b.getBBox(); return (r.width > 0 && r.height > 0) + " " + getComputedStyle(b).fillOpacity })()`))
	if err != nil {
		t.Fatal(err)
	}
	if band != "true 0.15" {
		t.Errorf("the band: %q, want laid out with a size and shaded at 0.15", band)
	}
}
