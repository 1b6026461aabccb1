package web_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, every image of the next question has been fetched before the
// answer to the current one is sent: the question issued ahead lets the
// page load them while the current question is on screen. (Items repeat
// between questions; an image fetched for an earlier question counts too,
// as the browser's cache serves it.) Runs with CLOSER_BROWSER=1.
func TestBrowserNextImagesLoadAhead(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	var mu sync.Mutex
	var log []string // "img /img/…" and "answer", in the order the server saw them
	a := newAppWrapped(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			switch {
			case strings.HasPrefix(r.URL.Path, "/img/"):
				log = append(log, "img "+r.URL.Path)
			case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/answer"):
				log = append(log, "answer")
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	const total = 6
	a.study("preload", 40, total, "open")
	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/s/preload"),
		chromedp.Click(`button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	); err != nil {
		t.Fatal(err)
	}
	var shown [][]string // each question's images, in order
	for i := 0; i < total; i++ {
		srcs, err := chromedp.Run(b, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("main img")).map(im => new URL(im.src).pathname)`))
		if err != nil || len(srcs) != 3 {
			t.Fatalf("question %d: images %v %v", i+1, srcs, err)
		}
		shown = append(shown, srcs)
		next := pollJS(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "` +
			strconv.Itoa(i+1) + ` of ` + strconv.Itoa(total) + `"`)
		if i == total-1 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`),
			// Give the browser the time a person takes to look.
			chromedp.Sleep(300e6), chromedp.KeyEvent("1"), next); err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	answers := 0
	fetched := map[string]bool{}
	for _, e := range log {
		if e == "answer" {
			answers++
			if answers >= total {
				break
			}
			for _, src := range shown[answers] {
				if !fetched[src] {
					t.Errorf("answer %d was sent before image %s of question %d was fetched", answers, src, answers+1)
				}
			}
			continue
		}
		fetched[strings.TrimPrefix(e, "img ")] = true
	}
	if answers != total {
		t.Fatalf("%d answers sent, want %d (requests %v)", answers, total, log)
	}
}
