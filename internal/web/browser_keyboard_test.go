package web_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Keyboard only, no mouse: Tab reaches the Start button and Enter starts;
// on a question, Tab reaches the options and the focused one is visibly
// marked; the keys answer every question to the completion code. Runs with
// CLOSER_BROWSER=1.
func TestBrowserKeyboardOnly(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.study("keys", 6, 3, "open")
	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/keys"), chromedp.WaitVisible(`form.start`)); err != nil {
		t.Fatal(err)
	}
	// Tab until the Start button has the focus (the links before it first).
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("20 presses of Tab never reached the Start button")
		}
		if err := chromedp.Do(b, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		on, err := chromedp.Run(b, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.matches("form.start button[type=submit]")`))
		if err != nil {
			t.Fatal(err)
		}
		if on {
			break
		}
	}
	if err := chromedp.Do(b, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question:not(.waiting)") !== null`)); err != nil {
		t.Fatal(err)
	}
	// The focused option looks different from the other one.
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("20 presses of Tab never reached an option")
		}
		if err := chromedp.Do(b, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		on, err := chromedp.Run(b, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.matches("button[name=closer]")`))
		if err != nil {
			t.Fatal(err)
		}
		if on {
			break
		}
	}
	visible, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => {
		const [f] = [document.activeElement], o = [...document.querySelectorAll("button[name=closer]")].find(e => e !== f);
		const s = getComputedStyle(f), u = getComputedStyle(o);
		return s.borderColor !== u.borderColor || (s.outlineStyle !== "none" && s.outlineWidth !== "0px");
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !visible {
		t.Fatal("the focused option looks like the other one")
	}
	for i := range 3 {
		next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 3"`, i+1))
		if i == 2 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		key := kb.ArrowLeft
		if i%2 == 1 {
			key = kb.ArrowRight
		}
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			chromedp.KeyEvent(key), next); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 3 {
		t.Fatalf("%d answers stored, want 3", n)
	}
}
