package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// oddButtonRE finds an odd-one-out page's item buttons: value and key.
var oddButtonRE = regexp.MustCompile(`<button type="submit" name="closer" value="(\d+)" class="option" data-key="(\d)">`)

// TestOddOneOutPage: the study form offers the odd-one-out format; its
// question page, a plain form without JavaScript, shows the three items
// as buttons keyed 1 to 3 under "Which one does not belong?" (in the
// study's language), and "can't decide" keyed 0; a click stores the odd
// one as the trial's choice, a choice not shown is refused with nothing
// stored.
func TestOddOneOutPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	c := a.admin()
	if body := a.do(c, "GET", "/admin/studies/new", nil, nil).body; !strings.Contains(body, `name="format" value="odd-one-out"`) ||
		!strings.Contains(body, `name="format" value="rank"`) || !strings.Contains(body, `name="rank_n"`) {
		t.Fatal("the study form does not offer odd-one-out and rank")
	}
	formatStudyByForm(t, a, c, "oddp", "odd-one-out", "", "", 6, 3)
	p := a.client()
	if res := a.do(p, "POST", "/s/oddp/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	page := a.do(p, "GET", "/s/oddp/q", nil, nil).body
	buttons := oddButtonRE.FindAllStringSubmatch(page, -1)
	if len(buttons) != 3 || !strings.Contains(page, "Which one does not belong?") || !strings.Contains(page, `data-format="odd-one-out"`) ||
		!strings.Contains(page, `name="closer" value="skip" class="button" data-key="0"`) || strings.Contains(page, `class="anchor"`) {
		t.Fatalf("odd-one-out page:\n%s", page)
	}
	var items []int
	for i, b := range buttons {
		if b[2] != strconv.Itoa(i+1) {
			t.Fatalf("button %d has key %s", i, b[2])
		}
		n, _ := strconv.Atoi(b[1])
		items = append(items, n)
	}
	qid := regexp.MustCompile(`name="question_id" value="([^"]+)"`).FindStringSubmatch(page)[1]
	other := 0
	for slices.Contains(items, other) {
		other++
	}
	res := a.do(p, "POST", "/s/oddp/answer", url.Values{"question_id": {qid}, "closer": {strconv.Itoa(other)}}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "is not one of the items shown") {
		t.Fatalf("a choice not shown: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if res := a.do(p, "POST", "/s/oddp/answer", url.Values{"question_id": {qid}, "closer": {strconv.Itoa(items[2])}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", res.StatusCode, res.body)
	}
	var choices, options []int
	if err := a.pool.QueryRow(ctx, `SELECT a.choices, q.options FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.question_id = $1`, qid).
		Scan(&choices, &options); err != nil || !slices.Equal(choices, []int{items[2]}) || !slices.Equal(options, items) {
		t.Fatalf("stored choices %v options %v, %v; want [%d] of %v", choices, options, err, items[2], items)
	}
	// In German.
	f := url.Values{"slug": {"oddp"}, "title": {"oddp"}, "status": {"open"}, "design": {"random"}, "questions_per_participant": {"3"},
		"language": {"de"}, "cant_decide": {"on"}}
	if res := a.do(c, "POST", "/admin/studies/oddp", f, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if page := a.do(p, "GET", "/s/oddp/q", nil, nil).body; !strings.Contains(page, "Welches passt nicht dazu?") || !strings.Contains(page, "Bild 1: ") {
		t.Fatalf("the German odd-one-out page:\n%s", page)
	}
}
