package web_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserRank: a rank 5-choose-2 study made in the study form runs
// in the browser: a click on a reference fills the next choice and marks
// the reference with its place, Undo (and Backspace) takes the last one
// back, Submit (and Enter) sends the choices in order; by mouse on odd
// questions, by the number keys on even ones. Each trial is stored once
// with the choices in the order made. Runs with CLOSER_BROWSER=1.
func TestBrowserRank(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	formatStudyByForm(t, a, a.admin(), "rankb", "rank", "5", "2", 8, 4)
	b := newBrowser(t, 1100, 1000)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/rankb"), chromedp.WaitVisible(`form.start`),
		chromedp.Click(`form.start button[type=submit]`), chromedp.WaitVisible(`form.question[data-format="rank"]`)); err != nil {
		t.Fatal(err)
	}
	type shown struct {
		QID   string `json:"qid"`
		Items []int  `json:"items"`
	}
	state := func() (chosen []string, marks []string) {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[[2][]string](`[
			[...document.querySelectorAll(".rank-choices select")].map(s => s.value),
			[...document.querySelectorAll(".reference")].map(r => r.getAttribute("data-rank") || "")]`))
		if err != nil {
			t.Fatal(err)
		}
		return v[0], v[1]
	}
	want := map[string][]int{}
	for i := range 4 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		s, err := chromedp.Run(b, chromedp.Evaluate[shown](`({qid: document.querySelector("input[name=question_id]").value,
			items: [...document.querySelectorAll(".reference")].map(r => +r.value)})`))
		if err != nil || len(s.Items) != 5 {
			t.Fatalf("question %d: %+v, %v", i+1, s, err)
		}
		first, wrong, second := (i+3)%5, (i+1)%5, i%5
		pick := func(k int) chromedp.Action[chromedp.Void] {
			if i%2 == 0 {
				return chromedp.Click(fmt.Sprintf(`.reference[data-key="%d"]`, k+1))
			}
			return chromedp.KeyEvent(fmt.Sprint(k + 1))
		}
		undo := chromedp.Click(`.rank-undo`)
		submit := chromedp.Click(`.rank-submit`)
		if i%2 == 1 {
			undo, submit = chromedp.KeyEvent(kb.Backspace), chromedp.KeyEvent(kb.Enter)
		}
		if err := chromedp.Do(b, pick(first), pick(wrong)); err != nil {
			t.Fatal(err)
		}
		chosen, marks := state()
		if !slices.Equal(chosen, []string{fmt.Sprint(s.Items[first]), fmt.Sprint(s.Items[wrong])}) || marks[first] != "1" || marks[wrong] != "2" {
			t.Fatalf("question %d after two picks: choices %v marks %v", i+1, chosen, marks)
		}
		if err := chromedp.Do(b, undo); err != nil {
			t.Fatal(err)
		}
		if chosen, marks = state(); chosen[1] != "" || marks[wrong] != "" || marks[first] != "1" {
			t.Fatalf("question %d after undo: choices %v marks %v", i+1, chosen, marks)
		}
		next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 4"`, i+1))
		if i == 3 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		if err := chromedp.Do(b, pick(second), submit, next); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		want[s.QID] = []int{s.Items[first], s.Items[second]}
	}
	rows, err := a.pool.Query(t.Context(), `SELECT question_id, choices FROM answers`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var qid string
		var choices []int
		if err := rows.Scan(&qid, &choices); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(choices, want[qid]) {
			t.Fatalf("stored trial %s: choices %v, want %v", qid, choices, want[qid])
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d trials stored, want 4", n)
	}
}
