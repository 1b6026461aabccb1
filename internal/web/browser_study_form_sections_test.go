package web_test

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// The study form in a browser (issue 26): its six sections and their nav
// are there; while the arms table is empty the single design's block
// shows, and once a row names an arm it is hidden; "Add an arm" adds a
// row and "Remove" takes one out; saving the table makes the study's arms; and the edit form of a
// study with arms does not show the single design's block, nor its
// fields. Runs with CLOSER_BROWSER=1.
func TestBrowserStudyFormSections(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	b := newBrowser(t, 1280, 900)
	if err := chromedp.Do(b, adminLogin(t, a, "/admin/studies/new"), chromedp.WaitVisible(`#arms-table`)); err != nil {
		t.Fatal(err)
	}
	eval := func(js string) bool {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	shown := func(sel string) bool {
		t.Helper()
		return eval(`(() => { const e = document.querySelector(` + "`" + sel + "`" + `); return e !== null && e.getClientRects().length > 0; })()`)
	}
	for _, id := range []string{"sec-what", "sec-items", "sec-design", "sec-participants", "sec-quality", "sec-results"} {
		if !shown("fieldset#"+id) || !shown(`nav.form-nav a[href="#`+id+`"]`) {
			t.Errorf("section %s or its link is not shown", id)
		}
	}
	if !eval(`getComputedStyle(document.querySelector("nav.form-nav")).position === "sticky"`) {
		t.Error("the section nav does not stay on screen")
	}
	if !shown(`select[name=design]`) || !shown(`#design-settings`) || shown(`#single-design-note`) {
		t.Fatal("without arms the single design's block is not shown")
	}
	rows := func() int {
		t.Helper()
		n, err := chromedp.Run(b, chromedp.Evaluate[int](`document.querySelectorAll("#arms-table tbody tr.arm-row").length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := rows()
	if !shown(`#add-arm`) || !shown(`#arms-table tbody tr:first-child .remove-arm`) {
		t.Fatal("no Add an arm or Remove buttons: the arms table's script did not run")
	}
	if err := chromedp.Do(b, chromedp.Click(`#add-arm`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	if got := rows(); got != before+1 {
		t.Fatalf("Add an arm: %d rows, want %d", got, before+1)
	}
	if err := chromedp.Do(b, chromedp.Click(`#arms-table tbody tr:last-child .remove-arm`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	if got := rows(); got != before {
		t.Fatalf("Remove: %d rows, want %d", got, before)
	}
	if err := chromedp.Do(b, chromedp.Click(`#add-arm`, chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	// The placeholders read as examples: grey, not bold.
	if !eval(`(() => { const s = getComputedStyle(document.querySelector("input[name=arm_name]"), "::placeholder");
		return Number(s.fontWeight) < 600 && s.color !== getComputedStyle(document.querySelector("input[name=title]")).color; })()`) {
		t.Error("the arms table's placeholder looks like a value")
	}
	// Fill the first and the added (last) row, type into the fields as a
	// researcher does, choose the designs.
	err := chromedp.Do(b,
		chromedp.SendKeys(`input[name=title]`, "Two arms"),
		chromedp.SendKeys(`input[name=slug]`, "two-arms"),
		chromedp.SendKeys(`#arms-table tbody tr:first-child input[name=arm_name]`, "smart"),
		chromedp.SetValue(`#arms-table tbody tr:first-child select[name=arm_design]`, "active"),
		chromedp.SendKeys(`#arms-table tbody tr:first-child input[name=arm_share]`, "0.5"),
		chromedp.SendKeys(`#arms-table tbody tr:first-child input[name=arm_settings]`, "warmup=5 pool=30"),
		chromedp.SendKeys(`#arms-table tbody tr:last-child input[name=arm_name]`, "plain"),
		chromedp.SetValue(`#arms-table tbody tr:last-child select[name=arm_design]`, "random"),
		chromedp.SendKeys(`#arms-table tbody tr:last-child input[name=arm_share]`, "50%"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if shown(`select[name=design]`) || shown(`#design-settings`) || !shown(`#single-design-note`) {
		t.Fatal("with arms in the table the single design's block still shows")
	}
	err = chromedp.Do(b,
		chromedp.Click(`form.study-form button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#design`),
	)
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.store.StudyBySlug(context.Background(), "two-arms")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Arms) != 2 || st.Arms[0].Name != "smart" || st.Arms[0].Design != study.DesignActive || st.Arms[0].Config.Pool != 30 ||
		st.Arms[1].Name != "plain" || st.Arms[1].Share != 0.5 {
		t.Fatalf("the saved arms: %+v", st.Arms)
	}
	if !eval(`document.querySelector("#design h2").textContent.includes("2 arms")`) {
		t.Error("the study page does not show the two arms")
	}
	// The edit form: the single design's block not shown, the arms in the
	// table.
	err = chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/admin/studies/two-arms/edit"), chromedp.WaitVisible(`#arms-table`))
	if err != nil {
		t.Fatal(err)
	}
	if shown(`select[name=design]`) || shown(`input[name=seed]`) || shown(`input[name=warmup]`) || !shown(`#single-design-note`) {
		t.Error("the edit form of a study with arms shows the single design's block")
	}
	if !eval(`document.querySelector("#arms-table tbody tr:first-child input[name=arm_name]").value === "smart"`) {
		t.Error("the edit form's table does not show the arms")
	}
}
