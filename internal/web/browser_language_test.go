package web_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// An Arabic study's pages are laid out right to left in Chromium: <html
// lang="ar" dir="rtl">, the computed direction rtl, the progress row
// mirrored (its text right of its bar), the buttons and the note of an
// early click in Arabic; the two options keep their sides (the first, the
// "←" one, on the left), and the key "1" answers the left one. Runs with
// CLOSER_BROWSER=1.
func TestBrowserArabicQuestionPage(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	st := a.study("ar", 6, 3, "open")
	in := study.StudyInput{Slug: "ar", Title: "دراسة", Instructions: "اختر الصورة **الأقرب**.", QuestionsPerParticipant: 3,
		Status: "open", MinViewMS: 3000, Quality: study.QualityControl{CantDecide: true}, Language: "ar"}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 900, 1000)
	type page struct {
		Lang, Dir, Direction, Button string
	}
	var landing page
	err := chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/s/ar"),
		chromedp.WaitVisible(`form.start button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	landing, err = chromedp.Run(b, chromedp.Evaluate[page](`({Lang: document.documentElement.lang, Dir: document.documentElement.dir,
		Direction: getComputedStyle(document.querySelector("main")).direction,
		Button: document.querySelector("form.start button[type=submit]").textContent.trim()})`))
	if err != nil {
		t.Fatal(err)
	}
	if landing != (page{Lang: "ar", Dir: "rtl", Direction: "rtl", Button: "ابدأ"}) {
		t.Fatalf("landing page %+v", landing)
	}
	if err := chromedp.Do(b,
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
		// An early click: the note says, in Arabic, to look a moment longer.
		chromedp.Click(`button[name=closer]`, chromedp.NodeVisible),
	); err != nil {
		t.Fatal(err)
	}
	type question struct {
		Dir, PromptDirection, Prompt, CantDecide, TooSoon, Progress string
		// The progress text's and bar's left edges, and the options'.
		ProgressTextLeft, ProgressBarLeft, FirstLeft, SecondLeft float64
		FirstKey, FirstValue                                     string
	}
	q, err := chromedp.Run(b, chromedp.Evaluate[question](`(() => {
		const opts = document.querySelectorAll("button.option");
		const note = document.querySelector(".too-soon");
		return {
			Dir: document.documentElement.dir,
			PromptDirection: getComputedStyle(document.querySelector("h1.prompt")).direction,
			Prompt: document.querySelector("h1.prompt").textContent,
			CantDecide: document.querySelector("button[value=skip]").firstChild.textContent.trim(),
			TooSoon: note && !note.hidden ? note.textContent : "",
			Progress: document.querySelector(".progress-text").textContent,
			ProgressTextLeft: document.querySelector(".progress-text").getBoundingClientRect().left,
			ProgressBarLeft: document.querySelector(".progress progress").getBoundingClientRect().left,
			FirstLeft: opts[0].getBoundingClientRect().left,
			SecondLeft: opts[1].getBoundingClientRect().left,
			FirstKey: opts[0].querySelector(".key").textContent,
			FirstValue: opts[0].value,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Dir != "rtl" || q.PromptDirection != "rtl" || q.Prompt != "أيّهما أكثر شبهًا بالصورة العلوية؟" ||
		q.CantDecide != "لا أستطيع أن أقرّر" || q.TooSoon != "يُرجى النظر إلى الصور لحظة أطول؛ ستعمل أزرار الإجابة بعد لحظة." ||
		q.Progress != "٠ من ٣" || q.FirstKey != "← أو 1" {
		t.Fatalf("question page %+v", q)
	}
	if q.ProgressTextLeft <= q.ProgressBarLeft {
		t.Errorf("the progress row is not mirrored: text at %.0f px, bar at %.0f px (want the text right of the bar)", q.ProgressTextLeft, q.ProgressBarLeft)
	}
	if q.FirstLeft >= q.SecondLeft {
		t.Errorf("the first option (←) is at %.0f px, the second at %.0f px: want the first on the left", q.FirstLeft, q.SecondLeft)
	}
	// Once the buttons take answers, "1" answers the first (left) option.
	if err := chromedp.Do(b,
		pollJS(`document.querySelector("form.question:not(.waiting)") !== null`),
		chromedp.KeyEvent("1"),
		pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "١ من ٣"`),
	); err != nil {
		t.Fatal(err)
	}
	var closer int
	if err := a.pool.QueryRow(context.Background(), `SELECT closer FROM answers`).Scan(&closer); err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(closer) != q.FirstValue {
		t.Errorf("the key 1 chose item %d, want the first option's %s", closer, q.FirstValue)
	}
}
