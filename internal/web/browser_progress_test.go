package web_test

import (
	"os"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The question page's progress bar in Chromium: the accessibility tree has
// a progressbar named "n of N" whose value and maximum are the questions
// answered and asked (before and after an answer), and the bar is drawn
// thick (at least 12 px high and 150 px wide, with an edge). Runs with
// CLOSER_BROWSER=1 (needs chromium).
func TestBrowserProgressBarAccessible(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.study("bar", 6, 4, "open")
	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/s/bar"),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#progress`),
	); err != nil {
		t.Fatal(err)
	}
	// bar reads the progressbar's computed name, value and maximum.
	bar := func() (name, now, max string) {
		t.Helper()
		obj, err := chromedp.Call(b, runtime.Evaluate, runtime.EvaluateParams{Expression: `document.getElementById("progress")`})
		if err != nil || obj.Result == nil || obj.Result.ObjectID == "" {
			t.Fatalf("the progress element: %v", err)
		}
		res, err := chromedp.Call(b, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{ObjectID: obj.Result.ObjectID, Role: "progressbar"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Nodes) != 1 || res.Nodes[0].Ignored {
			t.Fatalf("%d progressbar nodes in the accessibility tree, want 1 not ignored", len(res.Nodes))
		}
		n := res.Nodes[0]
		if n.Name != nil {
			name = string(n.Name.Value)
		}
		if n.Value != nil {
			now = string(n.Value.Value)
		}
		for _, p := range n.Properties {
			if p.Name == accessibility.PropertyNameValuemax && p.Value != nil {
				max = string(p.Value.Value)
			}
		}
		return name, now, max
	}
	if name, now, max := bar(); name != `"0 of 4"` || now != "0" || max != "4" {
		t.Errorf("before an answer: progressbar %s, value %s of %s; want \"0 of 4\", 0 of 4", name, now, max)
	}
	size, err := chromedp.Run(b, chromedp.Evaluate[[]float64](`(() => {
		const p = document.getElementById("progress"), r = p.getBoundingClientRect();
		return [r.height, r.width, parseFloat(getComputedStyle(p).borderTopWidth)];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if size[0] < 12 || size[1] < 150 || size[2] < 1 {
		t.Errorf("the progress bar is %v px high, %v px wide, with a %v px edge; want at least 12, 150 and 1", size[0], size[1], size[2])
	}
	if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](clickNotTheAnchorJS)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, pollJS(`(document.querySelector(".progress-text") || {}).textContent === "1 of 4"`)); err != nil {
		t.Fatal(err)
	}
	if name, now, max := bar(); name != `"1 of 4"` || now != "1" || max != "4" {
		t.Errorf("after an answer: progressbar %s, value %s of %s; want \"1 of 4\", 1 of 4", name, now, max)
	}
}
