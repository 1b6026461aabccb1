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

// rankRefRE finds a rank page's references: item and key.
var rankRefRE = regexp.MustCompile(`<button type="button" class="option reference" value="(\d+)" data-key="(\d)">`)

// TestRankPage: a rank 5-choose-2 question page works as a plain form:
// the framed query, five numbered references and two selects (the
// choices in order), a submit and "can't decide"; a repeated choice, a
// select left empty and a choice not shown are refused with the reason
// and nothing stored; two choices are stored in the order of the selects.
func TestRankPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	formatStudyByForm(t, a, a.admin(), "rankp", "rank", "5", "2", 8, 3)
	p := a.client()
	if res := a.do(p, "POST", "/s/rankp/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	page := a.do(p, "GET", "/s/rankp/q", nil, nil).body
	refs := rankRefRE.FindAllStringSubmatch(page, -1)
	if len(refs) != 5 || strings.Count(page, `<select name="choice" required>`) != 2 || !strings.Contains(page, `data-format="rank"`) ||
		!strings.Contains(page, "Choose the 2 images most like the framed one, in order: the most similar first.") ||
		!strings.Contains(page, `name="closer" value="choices"`) || !strings.Contains(page, `name="closer" value="skip"`) ||
		!strings.Contains(page, `class="anchor"`) || !strings.Contains(page, "Choice 1") || !strings.Contains(page, "Choice 2") {
		t.Fatalf("rank page:\n%s", page)
	}
	var items []int
	for i, r := range refs {
		if r[2] != strconv.Itoa(i+1) {
			t.Fatalf("reference %d has key %s", i, r[2])
		}
		n, _ := strconv.Atoi(r[1])
		items = append(items, n)
	}
	qid := regexp.MustCompile(`name="question_id" value="([^"]+)"`).FindStringSubmatch(page)[1]
	post := func(choices ...string) response {
		return a.do(p, "POST", "/s/rankp/answer", url.Values{"question_id": {qid}, "closer": {"choices"}, "choice": choices}, nil)
	}
	i := strconv.Itoa
	for _, bad := range []struct {
		choices []string
		reason  string
	}{
		{[]string{i(items[1]), i(items[1])}, "chosen twice"},
		{[]string{i(items[1]), ""}, "1 choice(s), want 2 in order"},
		{[]string{i(items[0]), i(items[1]), i(items[2])}, "3 choices, want 2 in order"},
	} {
		if res := post(bad.choices...); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, bad.reason) {
			t.Fatalf("choices %v: %d %s", bad.choices, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 0 {
		t.Fatalf("bad answers stored %d", n)
	}
	if res := post(i(items[4]), i(items[2])); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	var choices, options []int
	if err := a.pool.QueryRow(ctx, `SELECT a.choices, q.options FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.question_id = $1`, qid).
		Scan(&choices, &options); err != nil || !slices.Equal(choices, []int{items[4], items[2]}) || !slices.Equal(options, items) {
		t.Fatalf("stored choices %v options %v, %v", choices, options, err)
	}
}
