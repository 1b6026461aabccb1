package web_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// TestDesignsComparedScreenshots takes pictures of a study of the 40 demo
// disks that compares the active design with random questions (half the
// participants each, 10% of the questions held out), answered by a
// simulated crowd (the disks' true hue and size, 30 questions each, about
// one answer in twelve wrong): the dashboard's "Designs compared" section,
// the study page's design section, and the study form's active settings
// and arms. Recomputes run every 8 participants and whenever the active
// arm's pool runs low (recompute.DueStudies), as the worker would. It runs
// only when CLOSER_SCREENSHOTS names a directory (needs chromium):
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/web -run TestDesignsComparedScreenshots
func TestDesignsComparedScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLOSER_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CLOSER_SCREENSHOTS to a directory to take the screenshots (needs chromium)")
	}
	a, _ := newJobsApp(t, false)
	collect.RegisterDesigns(a.store)
	ctx := context.Background()
	arms := []study.Arm{
		{Name: "active", Design: study.DesignActive, Config: study.DesignConfig{Seed: 4, Warmup: 3, Pool: 40}, Share: 0.5},
		{Name: "random", Design: study.DesignRandom, Share: 0.5},
	}
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "compare", Title: "Disks: active against random",
		QuestionsPerParticipant: 30, Status: study.StatusOpen, Arms: arms, HeldoutShare: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()); err != nil {
		t.Fatal(err)
	}
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		return math.Hypot((coords[i][0]-coords[j][0])/270, (coords[i][1]-coords[j][1])/54)
	}
	given := 0
	answer := func(q, l, r int) int {
		given++
		closer := l
		if dist(q, r) < dist(q, l) {
			closer = r
		}
		if given%12 == 0 {
			closer = l + r - closer
		}
		return closer
	}
	runs := 0
	for p := range 64 {
		crowdAnswers(t, a.store, st.ID, 1, answer)
		if err := a.store.RecordPending(ctx); err != nil {
			t.Fatal(err)
		}
		due, err := a.store.ActivePoolsDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p%8 == 7 || slices.Contains(due, st.ID) {
			if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
				t.Fatal(err)
			}
			runs++
		}
	}
	last, err := a.store.LatestRun(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d answers, %d recomputes; the last took %v on %d answers", given, runs, last.Duration, last.Answers)
	bctx := newBrowser(t, 1280, 1000)
	err = chromedp.Do(bctx,
		adminLogin(t, a, "/admin/studies/compare/dashboard"),
		chromedp.WaitVisible(`#designs`),
		chromedp.Sleep(300*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	shots := map[string][]byte{}
	if shots["screenshot-designs-compared.png"], err = chromedp.Run(bctx, chromedp.Screenshot(`#designs`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(a.srv.URL+"/admin/studies/compare"), chromedp.WaitVisible(`#design`)); err != nil {
		t.Fatal(err)
	}
	if shots["screenshot-design-arms.png"], err = chromedp.Run(bctx, chromedp.Screenshot(`#design`)); err != nil {
		t.Fatal(err)
	}
	// A new study's form with the active design chosen; then two arms
	// typed into the arms table (which hides the single design's block).
	if err := chromedp.Do(bctx, chromedp.Navigate(a.srv.URL+"/admin/studies/new"), chromedp.WaitVisible(`#design-settings`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
		const s = document.querySelector("select[name=design]"); s.value = "active"; s.dispatchEvent(new Event("change"));
		document.querySelector("input[name=warmup]").value = "5";
		return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if shots["screenshot-active-form.png"], err = chromedp.Run(bctx, chromedp.Screenshot(`#design-settings`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
		document.querySelector("input[name=heldout_pct]").value = "10";
		const rows = document.querySelectorAll("#arms-table tbody tr");
		const fill = (r, name, design, share, settings) => {
			r.querySelector("[name=arm_name]").value = name; r.querySelector("[name=arm_design]").value = design;
			r.querySelector("[name=arm_share]").value = share; r.querySelector("[name=arm_settings]").value = settings;
		};
		fill(rows[0], "smart", "active", "0.5", "warmup=5 pool=40");
		fill(rows[1], "plain", "random", "0.5", "");
		document.querySelector("#add-arm").click();
		document.querySelector("#arms-table").dispatchEvent(new Event("input"));
		return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if shots["screenshot-arms-form.png"], err = chromedp.Run(bctx, chromedp.Screenshot(`#arms-settings`)); err != nil {
		t.Fatal(err)
	}
	for name, png := range shots {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
