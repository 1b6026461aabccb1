package web_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserOddOneOut: an odd-one-out study made in the study form runs
// in the browser: three items side by side in one row under "Which one
// does not belong?", answered by a click and by the keys 1 to 3, each
// trial stored once with the item chosen as its one choice, the trial's
// three items its options. Runs with CLOSER_BROWSER=1.
func TestBrowserOddOneOut(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	formatStudyByForm(t, a, a.admin(), "oddb", "odd-one-out", "", "", 6, 4)
	b := newBrowser(t, 1000, 900)
	if err := chromedp.Do(b, chromedp.Navigate(a.srv.URL+"/s/oddb"), chromedp.WaitVisible(`form.start`),
		chromedp.Click(`form.start button[type=submit]`), chromedp.WaitVisible(`form.question[data-format="odd-one-out"]`)); err != nil {
		t.Fatal(err)
	}
	type shown struct {
		QID   string `json:"qid"`
		Items []int  `json:"items"`
		Row   bool   `json:"row"`
	}
	var chosen = map[string]int{}
	for i := range 4 {
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`)); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		s, err := chromedp.Run(b, chromedp.Evaluate[shown](`(() => {
			const bs = [...document.querySelectorAll("form.question button.option")];
			const tops = bs.map(b => Math.round(b.getBoundingClientRect().top));
			return {qid: document.querySelector("input[name=question_id]").value,
				items: bs.map(b => +b.value), row: tops.every(t => t === tops[0]) && bs.length === 3};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Row || len(s.Items) != 3 {
			t.Fatalf("question %d shows %+v; want three items in one row", i+1, s)
		}
		prompt, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("h1.prompt").textContent`))
		if err != nil || prompt != "Which one does not belong?" {
			t.Fatalf("prompt %q, %v", prompt, err)
		}
		next := pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 4"`, i+1))
		if i == 3 {
			next = chromedp.WaitVisible(`#completion-code`)
		}
		pick := i % 3
		var act chromedp.Action[chromedp.Void]
		if i%2 == 0 {
			act = chromedp.Click(fmt.Sprintf(`form.question button.option[data-key="%d"]`, pick+1))
		} else {
			act = chromedp.KeyEvent(fmt.Sprint(pick + 1))
		}
		if err := chromedp.Do(b, act, next); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
		chosen[s.QID] = s.Items[pick]
		if !slices.Contains(s.Items, chosen[s.QID]) {
			t.Fatal("chose an item not shown")
		}
	}
	rows, err := a.pool.Query(t.Context(), `SELECT a.question_id, a.choices, q.options FROM answers a JOIN questions q ON q.id = a.question_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var qid string
		var choices, options []int
		if err := rows.Scan(&qid, &choices, &options); err != nil {
			t.Fatal(err)
		}
		if want, ok := chosen[qid]; !ok || !slices.Equal(choices, []int{want}) || len(options) != 3 {
			t.Fatalf("stored trial %s: choices %v options %v; chose %d", qid, choices, options, want)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d trials stored, want 4", n)
	}
}
