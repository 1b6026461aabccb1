package web_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
)

// On a phone (an emulated Pixel 5: 393×851 CSS pixels, touch): the question
// fits the screen (the top image and both options are fully visible without
// scrolling), and a study is answered to its completion code by tapping.
// Runs with CLOSER_BROWSER=1.
func TestBrowserPhoneByTouch(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.study("phone", 6, 3, "open")
	b := newBrowser(t, 900, 900)
	err := chromedp.Do(b,
		chromedp.Emulate(device.Pixel5),
		chromedp.Navigate(a.srv.URL+"/s/phone"),
		chromedp.Tap(`button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		fits, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => {
			const els = [document.querySelector(".anchor img"), ...document.querySelectorAll("button[name=closer]")];
			return els.length === 3 && els.every(e => { const r = e.getBoundingClientRect();
				return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.width >= 100; });
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if !fits {
			t.Fatalf("question %d does not fit a Pixel 5's screen", i+1)
		}
		next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 3"`, i+1))
		if i == 2 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		if err := chromedp.Do(b, chromedp.Tap(fmt.Sprintf(`form.question button[data-key="%d"]`, 1+i%2)), next); err != nil {
			t.Fatalf("tapping question %d: %v", i+1, err)
		}
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 3 {
		t.Fatalf("%d answers stored, want 3", n)
	}
}
