package web_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserTextStudy: a study of words (issue 29) answered by keyboard
// alone on a phone-sized screen: Enter starts, the arrow keys answer every
// question to the completion code; each question shows three texts (one
// of them "<script>…" literally), each inside its box (no overflow) at a
// font size between the clamp's bounds. Runs with CLOSER_BROWSER=1.
func TestBrowserTextStudy(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	// Three items: every question shows all three, the markup among them.
	a.textStudy("wordsb", "", "dog", "<script>alert(1)</script>", "screwdriver")
	b := newBrowser(t, 360, 740)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/wordsb"), chromedp.WaitVisible(`form.start`),
		chromedp.Focus(`form.start button[type=submit]`), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question`)); err != nil {
		t.Fatal(err)
	}
	type shown struct {
		Texts    []string `json:"texts"`
		Fits     bool     `json:"fits"`
		MinPx    float64  `json:"minPx"`
		MaxPx    float64  `json:"maxPx"`
		Scripts  int      `json:"scripts"`
		Overflow string   `json:"overflow"`
	}
	sawScript := false
	for i := range 3 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		s, err := chromedp.Run(b, chromedp.Evaluate[shown](`(() => {
			const ts = [...document.querySelectorAll("main .item-text")];
			const px = ts.map(e => parseFloat(getComputedStyle(e).fontSize));
			const over = ts.filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > innerWidth);
			return {texts: ts.map(e => e.textContent), fits: over.length === 0, minPx: Math.min(...px), maxPx: Math.max(...px),
				scripts: document.querySelectorAll("main script").length,
				overflow: over.map(e => e.textContent).join("|")};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Texts) != 3 || !s.Fits || s.Scripts != 0 {
			t.Fatalf("question %d shows %+v; want three texts inside their boxes, no script", i+1, s)
		}
		// text-fit-phrase (the longest item has 25 characters): between
		// 0.95rem and 1.5rem.
		if s.MinPx < 15 || s.MaxPx > 24 || s.MinPx != s.MaxPx {
			t.Errorf("question %d: font sizes %g..%g px, want one size within the phrase clamp", i+1, s.MinPx, s.MaxPx)
		}
		for _, x := range s.Texts {
			sawScript = sawScript || x == "<script>alert(1)</script>"
		}
		next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 3"`, i+1))
		if i == 2 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		key := kb.ArrowLeft
		if i%2 == 1 {
			key = kb.ArrowRight
		}
		if err := chromedp.Do(b, chromedp.KeyEvent(key), next); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 3 {
		t.Fatalf("%d answers stored, want 3", n)
	}
	if !sawScript {
		t.Fatal(`the item "<script>alert(1)</script>" was never shown as its text`)
	}
}
