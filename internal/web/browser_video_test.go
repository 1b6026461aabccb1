package web_test

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserVideoStudy: a triplet study of videos (issue 29) in Chromium.
// Each item shows as a muted inline video that does not play by itself;
// the play buttons are shown, the key S plays the left option's video and
// A the anchor's (the other stopped), a click on a play button plays its
// video and answers nothing; the arrow keys still answer. Runs with
// CLOSER_BROWSER=1.
func TestBrowserVideoStudy(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.videoStudy("videosb", "triplet")
	b := newBrowser(t, 800, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/videosb"), chromedp.WaitVisible(`form.start`),
		chromedp.Focus(`form.start button[type=submit]`), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Buttons int      `json:"buttons"`
		Visible int      `json:"visible"`
		Videos  int      `json:"videos"`
		Muted   int      `json:"muted"`
		Played  []string `json:"played"`
		Playing []string `json:"playing"`
	}
	// keyOf is the play key of the button whose URL is a video's.
	const keyOf = `(v => { const b = document.querySelector('button.play[data-src="' + v.getAttribute("src") + '"]'); return b ? b.dataset.playKey : "?"; })`
	look := func() state {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Evaluate[state](`(() => {
			const keyOf = `+keyOf+`;
			const bs = [...document.querySelectorAll("button.play")];
			const vs = [...document.querySelectorAll("main video")];
			return {buttons: bs.length, visible: bs.filter(b => !b.hidden && b.offsetParent !== null).length,
				videos: vs.length, muted: vs.filter(v => v.muted && !v.autoplay).length, played: window.played || [],
				playing: vs.filter(v => !v.paused).map(keyOf)};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`(() => { const keyOf = `+keyOf+`;
		document.querySelectorAll("main video").forEach(v =>
			v.addEventListener("play", () => { window.played = (window.played || []).concat(keyOf(v)); })); })()`)); err != nil {
		t.Fatal(err)
	}
	if s := look(); s.Buttons != 3 || s.Visible != 3 || s.Videos != 3 || s.Muted != 3 || len(s.Played) != 0 || len(s.Playing) != 0 {
		t.Fatalf("before any key: %+v; want three visible play buttons, three muted videos, nothing played", s)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent("s"), pollJS(`(window.played || []).join() === "s"`)); err != nil {
		t.Fatalf("S: %v (%+v)", err, look())
	}
	if err := chromedp.Do(b, chromedp.KeyEvent("a"), pollJS(`(window.played || []).join() === "s,a"`)); err != nil {
		t.Fatalf("A: %v (%+v)", err, look())
	}
	if s := look(); len(s.Playing) > 1 || (len(s.Playing) == 1 && s.Playing[0] != "a") {
		t.Errorf("after A: %+v; only the anchor may play", s)
	}
	if err := chromedp.Do(b, chromedp.Click(`button.play[data-play-key="d"]`), pollJS(`(window.played || []).join() === "s,a,d"`)); err != nil {
		t.Fatalf("click: %v (%+v)", err, look())
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 0 {
		t.Fatalf("playing stored %d answers", n)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent(kb.ArrowLeft),
		pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "1 of 3"`)); err != nil {
		t.Fatal(err)
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 1 {
		t.Fatalf("%d answers stored, want 1", n)
	}
}
