package web_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// sectionReachedJS reports whether the element with the id %q is in the
// window after a jump to it: its top below the sticky table of contents
// (not hidden under it) and above the window's bottom edge.
const sectionReachedJS = `(() => {
	const el = document.getElementById(%q);
	const nav = document.querySelector(".dash-nav").getBoundingClientRect();
	const r = el.getBoundingClientRect();
	return r.top >= nav.bottom - 1 && r.top < window.innerHeight && location.hash === "#" + %q;
})()`

// The dashboard of a study with two arms, catch and repeat trials, an
// automatically excluded participant and a finished recompute, in headless
// Chromium at 1280×800: every link of the table of contents brings its
// section into the window (below the contents, which stay visible); the
// participants table fits its container and the window, with the arm,
// the completion code and the exclusion's reason in columns of their own,
// and its Exclude buttons in view; the neighbour gallery's thumbnails are
// at least 64 px. Runs with CLOSER_BROWSER=1 (needs chromium).
func TestBrowserDashboardNavigationAndTable(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "wide", Title: "Wide", QuestionsPerParticipant: 24, Status: study.StatusOpen,
		Arms:      []study.Arm{{Name: "first-random-arm", Design: study.DesignRandom, Share: 0.5}, {Name: "second-random-arm", Design: study.DesignRandom, Share: 0.5}},
		Exclusion: study.ExclusionRules{MaxSideShare: 0.9},
		Quality:   study.QualityControl{CatchAt: []int{3}, RepeatAt: []int{9}, CantDecide: true}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 24
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		return math.Hypot((coords[i][0]-coords[j][0])/270, (coords[i][1]-coords[j][1])/54)
	}
	for p := range 8 {
		// Prolific-like ids: 24 characters that do not break.
		part, _, err := a.store.CreateParticipant(ctx, st.ID, fmt.Sprintf("5f8a9b0c1d2e3f4a5b6c7d%02d", p), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			pr, err := a.store.Next(ctx, part.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done || pr.Question == nil {
				break
			}
			q := pr.Question
			l, r := q.Options[0].Index, q.Options[1].Index
			closer := l
			if p > 0 && dist(q.Anchor.Index, r) < dist(q.Anchor.Index, l) {
				closer = r // participant 0 always picks the left option
			}
			ms := 700 + (i*397+p*211)%3000
			in := study.AnswerInput{QuestionID: q.ID, Closer: closer, ResponseMS: &ms, Skip: p == 3 && i == 5}
			if _, err := a.store.Answer(ctx, part.ID, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1 AND excluded_reason <> ''`, st.ID); n != 1 {
		t.Fatalf("%d participants excluded by the rule, want the one who always chose left", n)
	}

	b := newBrowser(t, 1280, 800)
	if err := chromedp.Do(b, adminLogin(t, a, "/admin/studies/wide/dashboard"), chromedp.WaitVisible(`.dash-nav`)); err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".dash-nav a")).map(a => a.getAttribute("href").slice(1))`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"overview": false, "recompute": false, "designs": false, "plots": false, "embedding": false,
		"participants": false, "neighbours": false, "contradicted": false, "exports": false, "settings": false}
	for _, id := range links {
		want[id] = true
	}
	for id, ok := range want {
		if !ok {
			t.Errorf("the table of contents has no link to #%s (it has %v)", id, links)
		}
	}
	// From the bottom of the page up, then down again: every link jumps
	// in both directions.
	order := append([]string{}, links...)
	for i := len(links) - 1; i >= 0; i-- {
		order = append(order, links[i])
	}
	for _, id := range order {
		err := chromedp.Do(b,
			chromedp.Click(fmt.Sprintf(`.dash-nav a[href="#%s"]`, id), chromedp.NodeVisible),
			pollJS(fmt.Sprintf(sectionReachedJS, id, id)),
		)
		if err != nil {
			top, _ := chromedp.Run(b, chromedp.Evaluate[float64](fmt.Sprintf(`document.getElementById(%q).getBoundingClientRect().top`, id)))
			t.Fatalf("the link to #%s does not bring it into the window (its top at %v px): %v", id, top, err)
		}
	}

	// The participants table at 1280 px.
	type fit struct {
		Table, Box, Page, Window float64
		Headers                  []string
		ButtonLeft, ButtonRight  float64
		BoxLeft, BoxRight        float64
		Reasons                  []string
		Arms                     []string
		Codes                    int
	}
	got, err := chromedp.Run(b, chromedp.Evaluate[fit](`(() => {
		const table = document.querySelector("table.quality");
		const box = table.closest(".table-scroll");
		const button = table.querySelector("button.danger");
		button.scrollIntoView({block: "center"});
		const br = button.getBoundingClientRect(), xr = box.getBoundingClientRect();
		const col = name => Array.from(table.querySelectorAll("thead th")).findIndex(th => th.textContent.startsWith(name));
		const cells = i => Array.from(table.querySelectorAll("tbody tr")).map(tr => tr.children[i].textContent.trim());
		return {
			Table: table.scrollWidth, Box: box.clientWidth, Page: document.documentElement.scrollWidth, Window: window.innerWidth,
			Headers: Array.from(table.querySelectorAll("thead th")).map(th => th.textContent.trim()),
			ButtonLeft: br.left, ButtonRight: br.right, BoxLeft: xr.left, BoxRight: xr.right,
			Reasons: Array.from(table.querySelectorAll("td.exclusion .reason")).map(e => e.textContent),
			Arms: cells(col("Arm")),
			Codes: table.querySelectorAll("td.code-cell code").length,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Table > got.Box || got.Page > got.Window {
		t.Errorf("the participants table is %v px wide in a box of %v px; the page %v px in a window of %v px", got.Table, got.Box, got.Page, got.Window)
	}
	if got.ButtonLeft < got.BoxLeft || got.ButtonRight > got.BoxRight || got.ButtonRight > got.Window {
		t.Errorf("the Exclude button spans %v–%v px, outside its box (%v–%v px) or the window (%v px)", got.ButtonLeft, got.ButtonRight, got.BoxLeft, got.BoxRight, got.Window)
	}
	for _, h := range []string{"Arm", "Code", "Exclusion"} {
		found := false
		for _, g := range got.Headers {
			found = found || g == h
		}
		if !found {
			t.Errorf("no %q column in %q", h, got.Headers)
		}
	}
	if len(got.Reasons) != 1 || got.Reasons[0] != "excluded automatically: 100% of the answers on the left (the limit is 90%)" {
		t.Errorf("exclusion reasons shown: %q", got.Reasons)
	}
	arms := map[string]int{}
	for _, name := range got.Arms {
		arms[name]++
	}
	if len(got.Arms) != 8 || arms["first-random-arm"]+arms["second-random-arm"] != 8 {
		t.Errorf("arms shown: %q", got.Arms)
	}
	if got.Codes != 8 {
		t.Errorf("%d completion codes shown, want 8 (everyone finished)", got.Codes)
	}

	// The neighbour gallery: thumbnails at 64 px or more.
	sizes, err := chromedp.Run(b, chromedp.Evaluate[[]float64](`(() => {
		document.getElementById("neighbours").scrollIntoView();
		return Array.from(document.querySelectorAll("table.gallery img")).map(i => Math.min(i.getBoundingClientRect().width, i.getBoundingClientRect().height));
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) < 20*11 {
		t.Fatalf("%d thumbnails in the gallery, want 20 items with 5+5 neighbours", len(sizes))
	}
	for i, s := range sizes {
		if s < 64 {
			t.Fatalf("gallery thumbnail %d is %v px, want at least 64", i, s)
		}
	}
}
