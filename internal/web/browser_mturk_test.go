package web_test

import (
	"context"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

// An MTurk HIT in Chromium, inside an iframe of another site, as MTurk
// shows it: a local stand-in for MTurk (at localhost, while the app is at
// 127.0.0.1, so the iframe is cross-site and its cookies third-party) frames
// the preview, which stores nothing, then the accepted HIT; the worker
// starts and answers every question inside the iframe, and the last page
// posts the assignment id and the code to the stand-in's
// /mturk/externalSubmit. The stand-in is allowed by Config.MTurkTestOrigins
// only. Runs with CLOSER_BROWSER=1.
func TestBrowserMTurkHIT(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	var mu sync.Mutex
	var submitted []url.Values
	var frameSrc string // the study link the stand-in's page frames
	mturk := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hit":
			mu.Lock()
			src := frameSrc
			mu.Unlock()
			w.Write([]byte(`<!doctype html><title>MTurk stand-in</title><h1>HIT</h1>` +
				`<iframe id="hit" src="` + html.EscapeString(src) + `" width="1000" height="800"></iframe>`))
		case "/mturk/externalSubmit":
			if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
				http.Error(w, "a form POST, please", http.StatusBadRequest)
				return
			}
			mu.Lock()
			submitted = append(submitted, r.PostForm)
			mu.Unlock()
			w.Write([]byte(`<!doctype html><title>submitted</title><p id="submitted">HIT submitted</p>`))
		default:
			http.NotFound(w, r)
		}
	}))
	mturk.Start()
	t.Cleanup(mturk.Close)
	_, port, _ := net.SplitHostPort(mturk.Listener.Addr().String())
	standIn := "http://localhost:" + port // another site than the app's 127.0.0.1

	a := newAppWith(t, web.Config{MTurkTestOrigins: []string{standIn}})
	st := a.study("hit", 6, 3, "open")
	in := study.StudyInput{Slug: "hit", Title: "HIT", Instructions: "Pick the closer one.", QuestionsPerParticipant: 3, Status: "open",
		Platform: study.Platform{Kind: study.PlatformMTurk}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	link := func(assignment, worker string) string {
		q := url.Values{"assignmentId": {assignment}, "hitId": {"HIT1"}, "turkSubmitTo": {standIn}}
		if worker != "" {
			q.Set("workerId", worker)
		}
		return a.srv.URL + "/s/hit?" + q.Encode()
	}
	setFrame := func(src string) {
		mu.Lock()
		frameSrc = src
		mu.Unlock()
	}

	// A bounded test: a page that never shows in the iframe fails it, not hangs it.
	b, cancel := context.WithTimeout(newBrowser(t, 1100, 950), time.Minute)
	t.Cleanup(cancel)
	// The preview: MTurk frames the study before the worker accepts.
	setFrame(link("ASSIGNMENT_ID_NOT_AVAILABLE", ""))
	if err := chromedp.Do(b, chromedp.Navigate(standIn+"/hit"), chromedp.WaitVisible(`#hit`)); err != nil {
		t.Fatal(err)
	}
	frame := hitFrame(t, b, a.srv.URL+"/s/hit?")
	if err := chromedp.Do(frame, chromedp.WaitVisible(`#preview-note`), chromedp.WaitVisible(`section.example img`)); err != nil {
		t.Fatalf("the preview in MTurk's iframe: %v", err)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 0 {
		t.Fatalf("%d participants after the preview", n)
	}

	// The accepted HIT: start, answer every question, all inside the iframe.
	setFrame(link("ASSIGN1", "WORKER1"))
	if err := chromedp.Do(b, chromedp.Navigate(standIn+"/hit"), chromedp.WaitVisible(`#hit`)); err != nil {
		t.Fatal(err)
	}
	frame = hitFrame(t, b, a.srv.URL+"/s/hit?")
	if err := chromedp.Do(frame, chromedp.WaitVisible(`form.start button[type=submit]`),
		chromedp.Click(`form.start button[type=submit]`), chromedp.WaitVisible(`form.question`)); err != nil {
		t.Fatalf("starting inside the iframe: %v", err)
	}
	for i := range 3 {
		if err := chromedp.Do(frame, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			chromedp.Click(`form.question button[data-key="2"]`)); err != nil {
			t.Fatalf("question %d inside the iframe: %v", i+1, err)
		}
	}
	code, err := chromedp.Run(frame, chromedp.Text(`#completion-code`))
	if err != nil || code == "" {
		t.Fatalf("the done page inside the iframe: code %q, %v", code, err)
	}

	// The page submits the HIT by itself after a few seconds.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(submitted)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	got := submitted
	mu.Unlock()
	if len(got) != 1 || got[0].Get("assignmentId") != "ASSIGN1" || got[0].Get("code") != code {
		t.Fatalf("the stand-in's externalSubmit got %v; want once assignmentId ASSIGN1 and code %s", got, code)
	}
	var ext, answered string
	if err := a.pool.QueryRow(context.Background(), `SELECT p.external_id, (SELECT count(*) FROM answers WHERE participant_id = p.id)::text
		FROM participants p WHERE p.study_id = $1`, st.ID).Scan(&ext, &answered); err != nil {
		t.Fatal(err)
	}
	if ext != "WORKER1" || answered != "3" {
		t.Fatalf("participant %q with %s answers; want WORKER1 with 3", ext, answered)
	}
}

// hitFrame returns a context attached to the cross-site iframe whose URL
// starts with prefix: Chrome runs it in a process of its own, as a target
// that the page's DOM does not reach.
func hitFrame(t *testing.T, b context.Context, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := chromedp.Targets(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				ctx, cancel := chromedp.NewContext(b, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return ctx
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no iframe target at %s among %d targets", prefix, len(infos))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
