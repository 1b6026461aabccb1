package web_test

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/collect"
)

// The study form shows only the settings of the chosen design and platform
// (the active design's warm-up, score, model, candidates and pool for the
// active design only), and only the chosen platform's help, and shows the
// others when the choice changes; the arms and the held-out share show for
// every design. Runs with CLOSER_BROWSER=1.
func TestBrowserStudyFormShowsTheChosenSettings(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	if _, err := a.accounts.CreateAdmin(context.Background(), "form@example.org", "form-password"); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1000, 1400)
	shown := func(name string) bool {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => { const e = document.querySelector("[name=`+name+`]");
			return e !== null && e.getClientRects().length > 0; })()`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	err := chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/admin"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, "form@example.org"),
		chromedp.SendKeys(`input[name=password]`, "form-password"),
		chromedp.Submit(`input[name=password]`),
		chromedp.WaitVisible(`a[href="/admin/studies/new"]`),
		chromedp.Navigate(a.srv.URL+"/admin/studies/new"),
		chromedp.WaitVisible(`select[name=design]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	choose := func(design, platform string) {
		t.Helper()
		_, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => {
			for (const [n, v] of [["design", "`+design+`"], ["platform", "`+platform+`"]]) {
				const s = document.querySelector("select[name=" + n + "]"); s.value = v; s.dispatchEvent(new Event("change"));
			}
			return true; })()`))
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, want map[string]bool) {
		t.Helper()
		for name, w := range want {
			if got := shown(name); got != w {
				t.Errorf("%s: %s shown %v, want %v", when, name, got, w)
			}
		}
	}
	// help checks the platforms (data-platforms) of the platform help on
	// screen: the paragraphs, then the fields' notes.
	help := func(when, want string) {
		t.Helper()
		got, err := chromedp.Run(b, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#platform-settings p[data-platforms], #platform-settings small[data-platforms]"))
			.filter(e => e.getClientRects().length > 0).map(e => e.getAttribute("data-platforms")).join(" | ")`))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: platform help shown for %q, want %q", when, got, want)
		}
	}
	check("random, no platform", map[string]bool{"title": true, "seed": false, "landmarks": false, "coordinates": false,
		"completion_code": false, "id_param": false})
	help("no platform", "none")
	choose("basis", "prolific")
	check("basis, Prolific", map[string]bool{"seed": true, "repeats": true, "landmarks": false, "coordinates": true, "extra": true,
		"completion_code": true, "screened_out_code": true, "id_param": false, "return_url": false})
	help("Prolific", "prolific | prolific mturk generic | prolific | prolific")
	choose("random", "mturk")
	check("random, MTurk", map[string]bool{"completion_code": true, "screened_out_code": true, "id_param": false, "return_url": false})
	help("MTurk", "mturk | prolific mturk generic | mturk | mturk")
	choose("landmark-k1", "generic")
	check("landmark-k1, generic", map[string]bool{"landmarks": true, "landmark_picks": true, "coordinates": false, "extra": false,
		"id_param": true, "return_url": true})
	help("generic", "generic | prolific mturk generic | generic | generic")
	choose("random", "")
	help("no platform again", "none")
	// The active design's settings show for the active design only; the
	// arms and the held-out share for every design.
	active := map[string]bool{"warmup": true, "score": true, "model": true, "candidates": true, "pool": true}
	check("random again", map[string]bool{"warmup": false, "score": false, "model": false, "candidates": false, "pool": false,
		"arms": true, "heldout_pct": true})
	choose("active", "")
	check("active", map[string]bool{"warmup": true, "score": true, "model": true, "candidates": true, "pool": true,
		"seed": true, "repeats": true, "landmarks": false, "coordinates": false, "extra": false, "arms": true, "heldout_pct": true})
	for _, d := range []string{"landmark-k1", "landmark-k2", "basis"} {
		choose(d, "")
		want := map[string]bool{}
		for k := range active {
			want[k] = false
		}
		check(d, want)
	}
	choose("active", "")
	check("active again", active)
}
