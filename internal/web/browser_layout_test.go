package web_test

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// The "beside" layout (issue 26) in a browser: the framed anchor is left
// of both options, in the same row, and the three are drawn at the same
// size, on a 1280 px desktop and on a 390 px phone. Runs with
// CLOSER_BROWSER=1.
func TestBrowserBesideLayout(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "beside", Title: "Beside", QuestionsPerParticipant: 3,
		Status: study.StatusOpen, Layout: study.LayoutBeside})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:6]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	type box struct{ Left, Right, Top, Bottom, Width float64 }
	for _, c := range []struct {
		name string
		emu  chromedp.Action[chromedp.Void]
	}{
		{"desktop 1280×900", chromedp.EmulateViewport(1280, 900)},
		{"phone 390×844", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch)},
	} { //nolint:paralleltest // one browser per case, as in TestBrowserItemsAtOneSize
		b := newBrowser(t, 1000, 900)
		err := chromedp.Do(b, c.emu,
			chromedp.Navigate(a.srv.URL+"/s/beside"),
			chromedp.Click(`button[type=submit]`, chromedp.NodeVisible),
			chromedp.WaitVisible(`form.question`),
			pollJS(`[...document.querySelectorAll(".anchor img, .option img")].every(i => i.complete && i.naturalWidth > 0)`),
		)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Each image's drawn content (inside any border), anchor first.
		boxes, err := chromedp.Run(b, chromedp.Evaluate[[]box](`[...document.querySelectorAll(".anchor img, .option img")].map(i => {
			const r = i.getBoundingClientRect(), s = getComputedStyle(i);
			const bl = parseFloat(s.borderLeftWidth), br = parseFloat(s.borderRightWidth), bt = parseFloat(s.borderTopWidth);
			return {Left: r.left + bl, Right: r.right - br, Top: r.top + bt, Bottom: r.bottom, Width: r.width - bl - br};
		})`))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(boxes) != 3 {
			t.Fatalf("%s: %d images", c.name, len(boxes))
		}
		anchor, left, right := boxes[0], boxes[1], boxes[2]
		if anchor.Width < 60 || math.Abs(anchor.Width-left.Width) > 1 || math.Abs(anchor.Width-right.Width) > 1 {
			t.Errorf("%s: anchor and options drawn %.1f, %.1f, %.1f px wide, want three equal", c.name, anchor.Width, left.Width, right.Width)
		}
		if anchor.Right > left.Left || left.Right > right.Left {
			t.Errorf("%s: not anchor, left, right from left to right: %+v", c.name, boxes)
		}
		// One row: the anchor overlaps both options vertically.
		if anchor.Top >= left.Bottom || left.Top >= anchor.Bottom || anchor.Top >= right.Bottom {
			t.Errorf("%s: the anchor is not in the options' row: %+v", c.name, boxes)
		}
		// All on screen, no sideways scrolling.
		if vw, err := chromedp.Run(b, chromedp.Evaluate[float64](`document.documentElement.clientWidth`)); err != nil || right.Right > vw {
			t.Errorf("%s: the right option ends at %.1f px, past the %.1f px viewport (%v)", c.name, right.Right, vw, err)
		}
		// The anchor is marked by its frame.
		if frame, err := chromedp.Run(b, chromedp.Evaluate[float64](`parseFloat(getComputedStyle(document.querySelector(".anchor img")).borderLeftWidth)`)); err != nil || frame < 2 {
			t.Errorf("%s: the anchor's frame is %.1f px (%v)", c.name, frame, err)
		}
	}
}
