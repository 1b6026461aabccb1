package web_test

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/closer-lab/closer/internal/study"
)

// TestBrowserSoundStudy: a triplet study of sounds (issue 29) in Chromium.
// app.js swaps the audio elements' own controls for the play buttons;
// nothing plays until asked; the key S plays the left option's sound and
// A the anchor's (each from the start, the other stopped), a click on a
// play button plays its sound and answers nothing; the arrow keys still
// answer. Runs with CLOSER_BROWSER=1.
func TestBrowserSoundStudy(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.soundStudy("soundsb", "triplet", "first")
	b := newBrowser(t, 800, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/soundsb"), chromedp.WaitVisible(`form.start`),
		chromedp.Focus(`form.start button[type=submit]`), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Buttons  int      `json:"buttons"`
		Visible  int      `json:"visible"`
		Controls int      `json:"controls"`
		Played   []string `json:"played"`
		Playing  []string `json:"playing"`
	}
	look := func() state {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Evaluate[state](`(() => {
			const bs = [...document.querySelectorAll("button.play")];
			const as = [...document.querySelectorAll(".player audio")];
			return {buttons: bs.length, visible: bs.filter(b => !b.hidden && b.offsetParent !== null).length,
				controls: as.filter(a => a.controls).length, played: window.played || [],
				playing: as.filter(a => !a.paused).map(a => a.previousElementSibling.dataset.playKey)};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".player audio").forEach(a =>
		a.addEventListener("play", () => { window.played = (window.played || []).concat(a.previousElementSibling.dataset.playKey); }))`)); err != nil {
		t.Fatal(err)
	}
	if s := look(); s.Buttons != 3 || s.Visible != 3 || s.Controls != 0 || len(s.Played) != 0 {
		t.Fatalf("before any key: %+v; want three visible play buttons, no controls, nothing played", s)
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

// TestBrowserPlayToEnd: in a study that asks for every sound to be played
// to its end (issue 29), the answer buttons wait (an arrow key answers
// nothing) until the anchor and both options were played through, and
// then answer. Runs with CLOSER_BROWSER=1.
func TestBrowserPlayToEnd(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.soundStudyWith(study.StudyInput{Slug: "toend", Title: "To the end", QuestionsPerParticipant: 3, Status: study.StatusOpen, PlayToEnd: true}, "first")
	b := newBrowser(t, 800, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/toend"), chromedp.WaitVisible(`form.start`),
		chromedp.Focus(`form.start button[type=submit]`), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question[data-play-to-end]`)); err != nil {
		t.Fatal(err)
	}
	waiting := `document.querySelector("form.question.waiting") !== null`
	// Two of the three sounds played through: still waiting.
	if err := chromedp.Do(b, chromedp.KeyEvent("a"), pollJS(`document.querySelectorAll(".player audio")[0].ended`),
		chromedp.KeyEvent("s"), pollJS(`document.querySelectorAll(".player audio")[1].ended`)); err != nil {
		t.Fatal(err)
	}
	still, err := chromedp.Run(b, chromedp.Evaluate[bool](waiting))
	if err != nil || !still {
		t.Fatalf("after two sounds of three the form waits: %v %v", still, err)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent(kb.ArrowLeft)); err != nil {
		t.Fatal(err)
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 0 {
		t.Fatalf("an answer before every sound was played: %d stored", n)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent("d"), pollJS(`!(`+waiting+`)`), chromedp.KeyEvent(kb.ArrowLeft),
		pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "1 of 3"`)); err != nil {
		t.Fatal(err)
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 1 {
		t.Fatalf("%d answers stored, want 1", n)
	}
}

// TestBrowserListenMS: the question page's script sends how long the
// question's sounds played (issue 29). The anchor's sound played through
// once (key A) counts its length, within a second's play-back overhead;
// a question answered without playing anything is stored with 0. Runs
// with CLOSER_BROWSER=1.
func TestBrowserListenMS(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	a.soundStudyWith(study.StudyInput{Slug: "listened", Title: "Listened", QuestionsPerParticipant: 3, Status: study.StatusOpen}, "first")
	b := newBrowser(t, 800, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/listened"), chromedp.WaitVisible(`form.start`),
		chromedp.Focus(`form.start button[type=submit]`), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question.waiting") === null`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent("a"), pollJS(`document.querySelectorAll(".player audio")[0].ended`)); err != nil {
		t.Fatal(err)
	}
	secs, err := chromedp.Run(b, chromedp.Evaluate[float64](`document.querySelectorAll(".player audio")[0].duration`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, chromedp.KeyEvent(kb.ArrowLeft),
		pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "1 of 3"`),
		pollJS(`document.querySelector("form.question.waiting") === null`), chromedp.KeyEvent(kb.ArrowLeft),
		pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "2 of 3"`)); err != nil {
		t.Fatal(err)
	}
	first := a.count(`SELECT listen_ms FROM answers ORDER BY answered_at LIMIT 1`)
	if want := int(secs * 1000); first < want-100 || first > want+1000 {
		t.Errorf("the anchor's sound of %.2f s played through: listen_ms %d", secs, first)
	}
	if second := a.count(`SELECT listen_ms FROM answers ORDER BY answered_at OFFSET 1 LIMIT 1`); second != 0 {
		t.Errorf("a question answered without a sound played: listen_ms %d", second)
	}
}
