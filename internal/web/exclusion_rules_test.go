package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The exclusion rules set on the study form: stored, shown again on the
// form, refused with the reason when out of range; a participant who keeps
// pressing one key is excluded when they finish, and the study page says
// why.
func TestExclusionRulesOnTheForm(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("rules", 6, 3, "open")
	admin := a.admin()
	form := url.Values{"title": {"Rules"}, "slug": {"rules"}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"fast_ms": {"350"}, "max_fast_pct": {"40"}, "max_side_pct": {"90"}}
	bad := withField(form, "max_side_pct", "50")
	if res := a.do(admin, "POST", "/admin/studies/rules", bad, nil); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "one side") {
		t.Fatalf("a side limit of 50%%: %d", res.StatusCode)
	}
	if res := a.do(admin, "POST", "/admin/studies/rules", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	edit := a.do(admin, "GET", "/admin/studies/rules/edit", nil, nil)
	for _, want := range []string{`name="fast_ms" min="0" max="60000" value="350"`, `name="max_fast_pct" min="0" max="99" value="40"`, `name="max_side_pct" min="0" max="99" value="90"`} {
		if !strings.Contains(edit.body, want) {
			t.Fatalf("edit form lacks %s", want)
		}
	}
	c := a.client()
	a.do(c, "POST", "/s/rules/start", url.Values{}, nil)
	for range 3 {
		res := a.do(c, "GET", "/s/rules/q", nil, nil)
		qid, left := questionIDRE.FindStringSubmatch(res.body)[1], closerRE.FindStringSubmatch(res.body)[1]
		a.do(c, "POST", "/s/rules/answer", url.Values{"question_id": {qid}, "closer": {left}, "response_ms": {"2000"}}, nil)
	}
	page := a.do(admin, "GET", "/admin/studies/rules", nil, nil)
	if !strings.Contains(page.body, "excluded automatically: 100% of the answers on the left (the limit is 90%)") {
		t.Fatalf("the study page does not say why:\n%s", page.body)
	}
}
