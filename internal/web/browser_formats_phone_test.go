package web_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
)

// TestBrowserFormatsOnPhone: on an emulated Pixel 5 (393×851, touch), an
// odd-one-out question's three items stand in one row on screen and are
// answered by a tap; a rank 8-choose-2 question's query and eight
// references fit the screen's width, and two taps and Submit answer it.
// Runs with CLOSER_BROWSER=1.
func TestBrowserFormatsOnPhone(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	c := a.admin()
	formatStudyByForm(t, a, c, "oddph", "odd-one-out", "", "", 6, 2)
	formatStudyByForm(t, a, c, "rankph", "rank", "8", "2", 10, 2)
	for _, slug := range []string{"oddph", "rankph"} {
		b := newBrowser(t, 900, 900)
		if err := chromedp.Do(b, chromedp.Emulate(device.Pixel5), chromedp.Navigate(a.srv.URL+"/s/"+slug),
			chromedp.Tap(`button[type=submit]`, chromedp.NodeVisible), chromedp.WaitVisible(`form.question`)); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
				t.Fatalf("%s question %d: %v", slug, i+1, err)
			}
			fits, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => {
				const els = [...document.querySelectorAll(".anchor img, button.option")];
				const tops = [...document.querySelectorAll("button.option")].map(e => Math.round(e.getBoundingClientRect().top));
				const inWidth = els.every(e => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.width >= 60; });
				if (document.querySelector("form[data-format=odd-one-out]"))
					return inWidth && tops.length === 3 && tops.every(t => t === tops[0]) &&
						els.every(e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
				return inWidth && tops.length === 8;
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if !fits {
				t.Fatalf("%s question %d does not fit a Pixel 5's screen", slug, i+1)
			}
			next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 2"`, i+1))
			if i == 1 {
				next = chromedp.WaitVisible(`#completion-code`)
			}
			var acts []chromedp.Action[chromedp.Void]
			if slug == "oddph" {
				acts = append(acts, chromedp.Tap(fmt.Sprintf(`button.option[data-key="%d"]`, 1+i)))
			} else {
				acts = append(acts, chromedp.Tap(`.reference[data-key="3"]`), chromedp.Tap(`.reference[data-key="7"]`),
					chromedp.Tap(`.rank-submit`))
			}
			if err := chromedp.Do(b, append(acts, next)...); err != nil {
				t.Fatalf("%s question %d: %v", slug, i+1, err)
			}
		}
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE choices IS NOT NULL`); n != 4 {
		t.Fatalf("%d trials stored, want 4", n)
	}
}
