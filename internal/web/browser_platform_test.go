package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// A recruited participant in Chromium, on a platform whose return address
// is a local stand-in: from the platform's link with their id, through the
// consent and every question, to the stand-in with their code and id; the
// same id in a second browser continues the same participant (the done
// page, the same code, no second participant); a third person declines
// the consent and nothing is stored. Runs with CLOSER_BROWSER=1.
func TestBrowserRecruitedParticipant(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	var mu sync.Mutex
	var returned []string
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/done" { // the browser asks for a favicon too
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		returned = append(returned, r.URL.RawQuery)
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>platform</title><p id=back>back on the platform</p>"))
	}))
	t.Cleanup(platform.Close)

	a := newApp(t)
	st := a.study("panel", 6, 2, "open")
	in := study.StudyInput{Slug: "panel", Title: "Panel", Instructions: "Look closely.", Consent: "I agree to take part.",
		QuestionsPerParticipant: 2, Status: "open",
		Platform: study.Platform{Kind: study.PlatformGeneric, IDParam: "pid", CompletionCode: "PANEL-OK",
			ReturnURL: platform.URL + "/done?code={code}&who={external_id}"}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	link := a.srv.URL + "/s/panel?pid=w-42"

	b := newBrowser(t, 1000, 900)
	err := chromedp.Do(b,
		chromedp.Navigate(link),
		chromedp.WaitVisible(`section.consent`),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			chromedp.Click(`form.question button[data-key="1"]`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	// The done page shows the code, then the browser goes back (Refresh: 5 s).
	code, err := chromedp.Run(b, chromedp.Text(`#completion-code`))
	if err != nil || code != "PANEL-OK" {
		t.Fatalf("code %q, %v", code, err)
	}
	if err := chromedp.Do(b, chromedp.WaitVisible(`#back`)); err != nil {
		t.Fatalf("not sent back to the platform: %v", err)
	}
	mu.Lock()
	got := strings.Join(returned, " ")
	mu.Unlock()
	if got != "code=PANEL-OK&who=w-42" {
		t.Fatalf("the platform was reached with %q", got)
	}

	// The same id in a second browser: the same participant, done, shown
	// their code at once, never the consent again (issue 26).
	b2 := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b2, chromedp.Navigate(link), chromedp.WaitVisible(`#completion-code`)); err != nil {
		t.Fatal(err)
	}
	if consent, err := chromedp.Run(b2, chromedp.Evaluate[bool](`document.querySelector("section.consent, #decline") !== null`)); err != nil || consent {
		t.Fatalf("the finished participant's second browser shows the consent (%v, %v)", consent, err)
	}
	if again, err := chromedp.Run(b2, chromedp.Text(`#completion-code`)); err != nil || again != "PANEL-OK" {
		t.Fatalf("second browser's code %q, %v", again, err)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d participants for one id", n)
	}

	// Declining stores nothing.
	b3 := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b3, chromedp.Navigate(a.srv.URL+"/s/panel?pid=w-43"), chromedp.WaitVisible(`#decline`)); err != nil {
		t.Fatal(err)
	}
	// The consent's text sits in its frame, not in a second box (issue 26).
	if inner, err := chromedp.Run(b3, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("section.consent .prose")).borderTopWidth`)); err != nil || inner != "0px" {
		t.Errorf("the consent text's own border: %q, %v; want none inside the consent's frame", inner, err)
	}
	if err := chromedp.Do(b3, chromedp.Click(`#decline`), chromedp.WaitVisible(`main.notice`)); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(b3, chromedp.Text(`main.notice h1`)); err != nil || title != "You chose not to take part" {
		t.Fatalf("declined page %q, %v", title, err)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d participants after a decline, want 1", n)
	}
}
