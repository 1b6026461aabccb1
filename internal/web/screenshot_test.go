package web_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// TestBrowserScreenshots drives the real app in headless Chromium: it
// answers questions with the keyboard (so app.js's keys, background
// submission and swap are exercised), then logs in and opens the study
// page. It runs only when CLOSER_SCREENSHOTS names a directory, where it
// writes screenshot-question.png, screenshot-question-mobile.png and
// screenshot-study.png:
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/web -run TestBrowserScreenshots
func TestBrowserScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLOSER_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CLOSER_SCREENSHOTS to a directory to take the screenshots (needs chromium)")
	}
	a := newApp(t)
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "demo", Title: "Demo: coloured disks",
		Instructions: "Pick the disk **more similar** to the top one.", Debrief: "Thank you!",
		QuestionsPerParticipant: 50, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()); err != nil {
		t.Fatal(err)
	}
	// A German study on Prolific, for its question page, its Recruit box
	// and its form (issue 26).
	de, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "obst", Title: "Farbkreise",
		Instructions: "Wählen Sie die Scheibe, die der oberen **ähnlicher** ist.", Debrief: "Vielen Dank!",
		QuestionsPerParticipant: 30, Status: study.StatusOpen, Language: "de",
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "C1A2B3C4"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, de.ID, demo.Items()[:20]); err != nil {
		t.Fatal(err)
	}
	// A small simulated crowd, answering by the disks' true coordinates
	// (hue and size scaled to comparable ranges).
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		dh := (coords[i][0] - coords[j][0]) / 270
		dr := (coords[i][1] - coords[j][1]) / 54
		return math.Hypot(dh, dr)
	}
	for p := 0; p < 6; p++ {
		j := a.join("demo", fmt.Sprintf(`{"external_id": "sim-%d"}`, p))
		for i := 0; i < 50-7*p; i++ {
			var n nextResp
			a.api("GET", "/api/v1/studies/demo/next", j.Token, "", &n)
			closer := n.Left.Index
			if dist(n.Anchor.Index, n.Right.Index) < dist(n.Anchor.Index, n.Left.Index) {
				closer = n.Right.Index
			}
			if (p+i)%9 == 0 { // a little noise
				closer = n.Left.Index + n.Right.Index - closer
			}
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": %d}`, n.QuestionID, closer, 900+37*i)
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
	}
	if _, err := a.accounts.CreateAdmin(ctx, "admin@example.com", "closer-demo"); err != nil {
		t.Fatal(err)
	}

	bctx := newBrowser(t, 1000, 860)
	poll := pollJS

	err = chromedp.Do(bctx,
		chromedp.Navigate(a.srv.URL+"/s/demo?PROLIFIC_PID=browser-1"),
		chromedp.Click(`button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		key := kb.ArrowLeft
		if i%2 == 1 {
			key = "2"
		}
		want := fmt.Sprintf("%d of 50", i+1)
		// A key before the images are shown is not taken (app.js): wait
		// until the form takes an answer.
		err = chromedp.Do(bctx,
			poll(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			chromedp.KeyEvent(key),
			poll(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === %q`, want)),
		)
		if err != nil {
			t.Fatalf("keyboard answer %d: %v", i+1, err)
		}
	}
	if err := chromedp.Do(bctx, poll(`Array.from(document.images).every(i => i.complete)`), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	progress, err := chromedp.Run(bctx, chromedp.Text(`.progress-text`))
	if err != nil {
		t.Fatal(err)
	}
	if progress != "3 of 50" {
		t.Fatalf("progress %q after three key presses", progress)
	}
	question, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	// The same page on a phone-sized screen.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 760, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(`form.question`), poll(`Array.from(document.images).every(i => i.complete)`)); err != nil {
		t.Fatal(err)
	}
	mobile, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM answers a JOIN participants p ON p.id = a.participant_id WHERE p.external_id = 'browser-1'`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("browser answers stored: %d %v", n, err)
	}

	err = chromedp.Do(bctx,
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(a.srv.URL+"/admin/studies/demo"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, "admin@example.com"),
		chromedp.SendKeys(`input[name=password]`, "closer-demo"),
		chromedp.Submit(`input[name=password]`),
		chromedp.WaitVisible(`.stats`),
		// The item list's images load lazily, and the page now runs past
		// the window: load them all for the full-page screenshot.
		poll(`(document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager'), Array.from(document.images).every(i => i.complete))`),
	)
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(title, "Demo: coloured disks") {
		t.Fatalf("study page title %q", title)
	}
	study, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	// A preview (issue 26): the study page's button, the banner on the
	// question page.
	if err := chromedp.Do(bctx, chromedp.Click(`#preview button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`.preview-banner`), poll(`Array.from(document.images).every(i => i.complete)`)); err != nil {
		t.Fatal(err)
	}
	preview, err := chromedp.Run(bctx, chromedp.Screenshot(`main`))
	if err != nil {
		t.Fatal(err)
	}
	// The German study: a participant's question page, its study page's
	// Recruit box opened, and the top of its form with the sections' bar.
	err = chromedp.Do(bctx,
		chromedp.Navigate(a.srv.URL+"/s/obst?PROLIFIC_PID=browser-de&STUDY_ID=s&SESSION_ID=x"),
		chromedp.Click(`button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
		poll(`Array.from(document.images).every(i => i.complete)`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if lang, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil || lang != "de" {
		t.Fatalf("the German study's question page has lang %q (%v)", lang, err)
	}
	german, err := chromedp.Run(bctx, chromedp.Screenshot(`main`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		chromedp.Navigate(a.srv.URL+"/admin/studies/obst"),
		chromedp.Click(`#recruit summary`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#recruit-prolific-url`),
		poll(`Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)`),
	)
	if err != nil {
		t.Fatal(err)
	}
	recruit, err := chromedp.Run(bctx, chromedp.Screenshot(`#recruit`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1200, 1400), chromedp.Navigate(a.srv.URL+"/admin/studies/obst/edit"), chromedp.WaitVisible(`.form-nav`)); err != nil {
		t.Fatal(err)
	}
	form, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	for name, png := range map[string][]byte{
		"screenshot-question.png": question, "screenshot-question-mobile.png": mobile, "screenshot-study.png": study,
		"screenshot-preview.png": preview, "screenshot-question-de.png": german, "screenshot-recruit.png": recruit,
		"screenshot-study-form.png": form,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
