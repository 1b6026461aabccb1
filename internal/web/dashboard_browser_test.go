package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// TestBrowserDashboardLive opens an open study's dashboard in headless
// Chromium before any recompute, presses "Recompute now" (a web-only app
// queues it), starts a worker client that runs it, and waits for
// dashboard.js to notice the finished run and reload the page with the
// plots; then zooms the embedding with the mouse wheel. It runs when
// CLOSER_BROWSER=1 (needs chromium).
func TestBrowserDashboardLive(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a, _ := newJobsApp(t, false) // web only: nothing runs until a worker starts below
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "live", Title: "Live", QuestionsPerParticipant: 40, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()[:12]); err != nil {
		t.Fatal(err)
	}
	for p := range 4 {
		j := a.join("live", fmt.Sprintf(`{"external_id": "p%d"}`, p))
		for range 40 {
			var n nextResp
			a.api("GET", "/api/v1/studies/live/next", j.Token, "", &n)
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, min(n.Left.Index, n.Right.Index))
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
	}
	bctx := newBrowser(t, 1200, 900)
	err = chromedp.Do(bctx,
		adminLogin(t, a, "/admin/studies/live/dashboard"),
		chromedp.WaitVisible(`#recompute`),
		pollJS(`document.getElementById("run-state").textContent.includes("Not recomputed yet")`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Submitting navigates; the next page is the dashboard again (?msg=queued).
	_ = chromedp.Do(bctx, chromedp.Click(`#recompute button.primary`, chromedp.NodeVisible))
	if err := pollAcrossLoads(bctx, `document.getElementById("run-state").textContent.includes("queued")`, 60*time.Second); err != nil {
		t.Fatalf("the queued recompute is not shown: %v", err)
	}
	// A worker replica starts and runs the queued job.
	worker, err := recompute.New(a.pool, a.store, recompute.Config{Work: true, ScanEvery: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Stop(context.Background()) })
	// dashboard.js polls every 5 s and reloads once the run is done.
	// (data-zoom: dashboard.js has put its handlers on the plot; the
	// plot itself is parsed before the script runs.)
	if err := pollAcrossLoads(bctx, `document.querySelector("#embedding svg[data-zoom=on]") !== null`, 90*time.Second); err != nil {
		t.Fatalf("the page did not show the run's plots: %v", err)
	}
	before, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`document.querySelector("#embedding svg").viewBox.baseVal.width`))
	if err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`(() => {
		const svg = document.querySelector("#embedding svg");
		const r = svg.getBoundingClientRect();
		svg.dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true}));
		return svg.viewBox.baseVal.width;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !(after < before) {
		t.Fatalf("wheel did not zoom: viewBox width %v → %v", before, after)
	}
}
