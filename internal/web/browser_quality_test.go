package web_test

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// clickNotTheAnchorJS answers the question shown with the option that is
// not the top image: on a catch trial the wrong one, elsewhere the left.
const clickNotTheAnchorJS = `(() => {
	const anchor = document.querySelector("figure.anchor img").getAttribute("src");
	const options = [...document.querySelectorAll("form.question button[name=closer]")].filter(b => b.value !== "skip");
	(options.find(b => b.querySelector("img").getAttribute("src") !== anchor) || options[0]).click();
	return true;
})()`

// A participant in Chromium who fails the catch trials: they get the
// study's screened-out code at the end, are excluded with the reason, and
// their "can't decide" (key 3) counts as a question without a triplet.
// Runs with CLOSER_BROWSER=1.
func TestBrowserFailedCatchTrialsScreenOut(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	st := a.study("catchme", 6, 4, "open")
	in := study.StudyInput{Slug: "catchme", Title: "Catch me", QuestionsPerParticipant: 4, Status: "open",
		Platform:  study.Platform{Kind: study.PlatformGeneric, IDParam: "pid", CompletionCode: "ALL-GOOD", ScreenedOutCode: "SCREENED-OUT"},
		Exclusion: study.ExclusionRules{MinCatchAccuracy: 0.8},
		Quality:   study.QualityControl{CatchAt: []int{1, 3}, CantDecide: true}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/s/catchme?pid=careless-1"),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
		var err error
		if i == 2 {
			err = chromedp.Do(b, chromedp.KeyEvent("3")) // "can't decide"
		} else {
			_, err = chromedp.Run(b, chromedp.Evaluate[bool](clickNotTheAnchorJS))
		}
		if err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
		if i < 4 {
			want := []string{"", "1 of 4", "2 of 4", "3 of 4"}[i]
			if err := chromedp.Do(b, pollJS(`(document.querySelector(".progress-text") || {}).textContent === "`+want+`"`)); err != nil {
				t.Fatalf("after question %d: the page never showed %q: %v", i, want, err)
			}
		}
	}
	if err := chromedp.Do(b, chromedp.WaitVisible(`#completion-code`)); err != nil {
		t.Fatal(err)
	}
	code, err := chromedp.Run(b, chromedp.Text(`#completion-code`))
	if err != nil || code != "SCREENED-OUT" {
		t.Fatalf("code %q, %v; want the screened-out code", code, err)
	}
	var reason string
	if err := a.pool.QueryRow(context.Background(), `SELECT coalesce(excluded_reason, '') FROM participants WHERE external_id = 'careless-1'`).Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if reason != "0% of the catch trials right (the minimum is 80%)" {
		t.Errorf("excluded because %q", reason)
	}
	if n := a.count(`SELECT count(*) FROM trial_answers WHERE study_id = $1 AND closer IS NULL`, st.ID); n != 1 {
		t.Errorf("%d skips stored, want 1", n)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d triplets stored, want 1 (question 4)", n)
	}
}
