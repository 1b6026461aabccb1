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

// A Prolific participant in Chromium, from the study link with Prolific's
// three parameters to Prolific's completion URL with the study's code:
// app.prolific.com resolves, for this browser only, to a local TLS
// stand-in. The same PROLIFIC_PID in a second browser continues the same
// participant: their done page, the same code, no second participant, and
// the parameters are kept with them. Runs with CLOSER_BROWSER=1.
func TestBrowserProlificParticipant(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	var mu sync.Mutex
	var completed []string
	prolific := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/submissions/complete" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		completed = append(completed, r.URL.RawQuery)
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>Prolific</title><p id=complete>submission complete</p>"))
	}))
	t.Cleanup(prolific.Close)
	standIn := []chromedp.ExecAllocatorOption{
		chromedp.Flag("host-resolver-rules", "MAP app.prolific.com:443 "+strings.TrimPrefix(prolific.URL, "https://")),
		chromedp.Flag("ignore-certificate-errors", true),
	}

	a := newApp(t)
	st := a.study("pro", 6, 3, "open")
	in := study.StudyInput{Slug: "pro", Title: "On Prolific", Instructions: "Look closely.", QuestionsPerParticipant: 3, Status: "open",
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "C1A2B3C4", ScreenedOutCode: "SCREENED1"}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	link := a.srv.URL + "/s/pro?PROLIFIC_PID=5f1e2d3c4b5a69788796a5b4&STUDY_ID=study-1&SESSION_ID=session-9"

	b := newBrowser(t, 1000, 900, standIn...)
	if err := chromedp.Do(b, chromedp.Navigate(link),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			chromedp.Click(`form.question button[data-key="2"]`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	code, err := chromedp.Run(b, chromedp.Text(`#completion-code`))
	if err != nil || code != "C1A2B3C4" {
		t.Fatalf("code %q, %v", code, err)
	}
	// The page sends the participant on by itself after a few seconds.
	if err := chromedp.Do(b, chromedp.WaitVisible(`#complete`)); err != nil {
		t.Fatalf("not sent to Prolific: %v", err)
	}
	mu.Lock()
	got := strings.Join(completed, " ")
	mu.Unlock()
	if got != "cc=C1A2B3C4" {
		t.Fatalf("Prolific's completion URL was reached with %q", got)
	}

	// The same PROLIFIC_PID in a second browser: their code at once, no
	// consent or start again (issue 26).
	b2 := newBrowser(t, 1000, 900, standIn...)
	if err := chromedp.Do(b2, chromedp.Navigate(link), chromedp.WaitVisible(`#completion-code`)); err != nil {
		t.Fatal(err)
	}
	if start, err := chromedp.Run(b2, chromedp.Evaluate[bool](`document.querySelector("form.start, section.consent") !== null`)); err != nil || start {
		t.Fatalf("the finished participant's second browser shows the first page (%v, %v)", start, err)
	}
	if again, err := chromedp.Run(b2, chromedp.Text(`#completion-code`)); err != nil || again != "C1A2B3C4" {
		t.Fatalf("second browser's code %q, %v", again, err)
	}
	var n int
	var params string
	if err := a.pool.QueryRow(context.Background(),
		`SELECT count(*), max(platform_params::text) FROM participants WHERE study_id = $1`, st.ID).Scan(&n, &params); err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(params, `"STUDY_ID": "study-1"`) || !strings.Contains(params, `"SESSION_ID": "session-9"`) {
		t.Fatalf("%d participants for one PROLIFIC_PID, kept parameters %s", n, params)
	}
}
