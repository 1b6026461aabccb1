package web_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/study"
)

// narrowColumnsJS reports, for the table matching the selector %q, the
// header texts of the columns displayed, and whether the page fits the
// window (no sideways scroll of the page itself).
const narrowColumnsJS = `(() => {
	const table = document.querySelector(%q);
	return {
		Shown: Array.from(table.querySelectorAll("thead th")).filter(th => getComputedStyle(th).display !== "none").map(th => th.textContent.trim()),
		Fits: document.documentElement.scrollWidth <= window.innerWidth,
	};
})()`

// On a 390 px phone (narrower than 32 rem) the dashboard's participants
// table and the study page's keep their "Answered" column (an old
// narrow-screen rule hid every list table's third column, which became
// the dashboard's Answered), the studies list still gives up its Items
// column, and none of the three pages is wider than the window (their
// tables scroll sideways in their own box). Runs with
// CLOSER_BROWSER=1 (needs chromium).
func TestBrowserNarrowTablesKeepAnswered(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	ctx := context.Background()
	st := a.study("narrow", 8, 4, study.StatusOpen)
	part, _, err := a.store.CreateParticipant(ctx, st.ID, "narrow-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		pr, err := a.store.Next(ctx, part.ID)
		if err != nil || pr.Question == nil {
			t.Fatal(pr, err)
		}
		if _, err := a.store.Answer(ctx, part.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}

	b := newBrowser(t, 390, 844)
	if err := chromedp.Do(b, chromedp.EmulateViewport(390, 844), adminLogin(t, a, "/admin"), chromedp.WaitVisible(`table.studies`)); err != nil {
		t.Fatal(err)
	}
	type columns struct {
		Shown []string
		Fits  bool
	}
	width, err := chromedp.Run(b, chromedp.Evaluate[float64](`window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width != 390 {
		t.Fatalf("the window is %v px wide, want 390", width)
	}
	for _, c := range []struct {
		path, table string
		want, gone  string
	}{
		{"/admin", "table.studies", "Participants", "Items"},
		{"/admin/studies/narrow", "table.participants", "Answered", ""},
		{"/admin/studies/narrow/dashboard", "table.quality", "Answeredall questions", ""},
	} {
		if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+c.path), chromedp.WaitVisible(c.table)); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := chromedp.Run(b, chromedp.Evaluate[columns](fmt.Sprintf(narrowColumnsJS, c.table)))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		has := func(h string) bool {
			for _, s := range got.Shown {
				if s == h {
					return true
				}
			}
			return false
		}
		if !has(c.want) {
			t.Errorf("%s at %v px: the %q column is hidden (shown: %q)", c.path, width, c.want, got.Shown)
		}
		if c.gone != "" && has(c.gone) {
			t.Errorf("%s at %v px: the %q column is shown (shown: %q)", c.path, width, c.gone, got.Shown)
		}
		if !got.Fits {
			t.Errorf("%s at %v px: the page is wider than the window", c.path, width)
		}
	}
}
