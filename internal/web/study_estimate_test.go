package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/estimate"
	"github.com/closer-lab/closer/internal/study"
)

// TestStudyEstimate is issue 28's estimate before a study opens: the
// study page of a draft study offers it; "Save and estimate" stores the
// pay rate and seconds per question and a simulation on the study's own
// settings (its 20 items, 30 questions per participant, t-STE in d = 2),
// and the page says the answers in participants, minutes and pay with
// its interval, what it assumed (10% wrong answers, random questions
// instead of the study's design) and draws the simulated curve with its
// band; the stored result is the page's. Adding items marks it stale; a
// form without numbers is refused and stores nothing.
func TestStudyEstimate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	c := a.admin()
	st := a.study("est", 20, 30, study.StatusDraft)
	page := a.do(c, "GET", "/admin/studies/est", nil, nil)
	if page.StatusCode != http.StatusOK || !strings.Contains(page.body, `id="estimate"`) || !strings.Contains(page.body, "No estimate yet.") {
		t.Fatalf("before: %d, no estimate section", page.StatusCode)
	}
	bad := url.Values{"pay_per_hour": {"x"}, "currency": {"GBP"}, "seconds_per_question": {"6"}, "wrong_pct": {"10"}}
	if r := a.do(c, "POST", "/admin/studies/est/estimate", bad, nil); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a pay rate that is no number: %d", r.StatusCode)
	}
	if e, err := a.store.Estimate(ctx, st.ID); err != nil || e != nil {
		t.Fatalf("a refused form stored %v, %v", e, err)
	}
	form := url.Values{"pay_per_hour": {"12"}, "currency": {"GBP"}, "seconds_per_question": {"6"}, "wrong_pct": {"10"}, "target_error_pct": {""}}
	if r := a.do(c, "POST", "/admin/studies/est/estimate", form, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("estimate: %d %.300s", r.StatusCode, r.body)
	}
	costs, err := a.store.StudyCosts(ctx, st.ID)
	if err != nil || costs != (study.Costs{PayPerHour: 12, Currency: "GBP", SecondsPerQuestion: 6}) {
		t.Fatalf("costs %+v, %v", costs, err)
	}
	stored, err := a.store.Estimate(ctx, st.ID)
	if err != nil || stored == nil || stored.Result == nil {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	var as estimate.Assumptions
	var res estimate.Result
	if err := json.Unmarshal(stored.Assumed, &as); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stored.Result, &res); err != nil {
		t.Fatal(err)
	}
	if as.Items != 20 || as.Questions != 30 || as.Dim != 2 || as.Wrong != 0.1 || as.Design != study.DesignRandom || res.Answers == nil {
		t.Fatalf("assumed %+v, answers %v", as, res.Answers)
	}
	page = a.do(c, "GET", "/admin/studies/est", nil, nil)
	sec := section(t, page.body, `<section class="estimate" id="estimate">`)
	// 30 questions at 6 s: 3 minutes each; the pay at 12 GBP an hour.
	for _, want := range []string{`id="estimate-sentence"`, "About ", "participants at 30 questions each, about 3 minutes each",
		"GBP in pay at the study&#39;s rate of 12.00 GBP an hour", "to reach a held-out error of", "80% interval",
		"Assumed: a simulated crowd with 10% wrong answers", "about 20 items", "in d = 2 dimensions", "fitted by TSTE",
		`<path class="band s2"`, `<circle class="marker s1"`, `name="pay_per_hour"`, `value="12"`} {
		if !strings.Contains(sec, want) {
			t.Errorf("the estimate lacks %q:\n%s", want, sec)
		}
	}
	if strings.Contains(sec, "estimate-stale") {
		t.Error("a fresh estimate is called stale")
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[20:24]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	page = a.do(c, "GET", "/admin/studies/est", nil, nil)
	if !strings.Contains(page.body, `id="estimate-stale"`) || !strings.Contains(page.body, "now 24 items") {
		t.Error("the estimate is not marked stale after items were added")
	}
}
