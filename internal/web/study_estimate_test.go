package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/estimate"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
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

// TestStudyEstimateDesign: the estimate simulates the study as it runs.
// A landmark study's page says the design's questions were simulated
// (its landmarks, and the random questions after the design was covered)
// and the stored assumptions carry its settings; a study with arms
// simulates every arm at its share, says so, and gives each arm a line
// of its own; an odd-one-out study simulates its trials. Not parallel: a process
// runs one estimate at a time (estimateSlot), and TestStudyEstimate's
// would meet a 503.
func TestStudyEstimateDesign(t *testing.T) { //nolint:paralleltest // one estimate at a time per process (estimateSlot)
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := url.Values{"pay_per_hour": {"0"}, "currency": {"GBP"}, "seconds_per_question": {"6"}, "wrong_pct": {"10"}, "target_error_pct": {""}}
	lm, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "lm", Title: "Landmarks", QuestionsPerParticipant: 30, Status: study.StatusDraft,
		Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 2, Landmarks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	arms := []study.Arm{
		{Name: "lmarm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 2, Landmarks: 3}, Share: 0.5},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.5},
	}
	if _, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "arms", Title: "Arms", QuestionsPerParticipant: 30, Status: study.StatusDraft,
		Arms: arms}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "odd", Title: "Odd", QuestionsPerParticipant: 25, Status: study.StatusDraft,
		Design: study.DesignRandom, Format: string(study.FormatOddOneOut)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		slug string
		want []string
	}{
		{"lm", []string{"questions of the study&#39;s design, landmark-k1 (landmark k1, 3 landmarks", "of them random questions once a design had none open",
			"participants answered 30 questions each"}},
		{"arms", []string{"questions of the study&#39;s arms, each participant in one (lmarm, 50% of the participants: landmark-k1 (landmark k1, 3 landmarks",
			"rnd, 50% of the participants: random (random questions)", `id="estimate-arms"`, `<li data-arm="lmarm">lmarm (landmark-k1, 50% of the participants, `,
			`<li data-arm="rnd">rnd (random, 50% of the participants, `}},
		{"odd", []string{"random odd-one-out trials (each implying 2 triplets", "participants answered 25 questions each"}},
	} {
		st, err := a.store.StudyBySlug(ctx, tc.slug)
		if err != nil {
			t.Fatal(err)
		}
		if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:20]); err != nil || len(rej) > 0 {
			t.Fatal(rej, err)
		}
		if r := a.do(c, "POST", "/admin/studies/"+tc.slug+"/estimate", form, nil); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: estimate: %d %.300s", tc.slug, r.StatusCode, r.body)
		}
		sec := section(t, a.do(c, "GET", "/admin/studies/"+tc.slug, nil, nil).body, `<section class="estimate" id="estimate">`)
		for _, want := range tc.want {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: the estimate lacks %q:\n%s", tc.slug, want, sec)
			}
		}
		if strings.Contains(sec, "estimate-stale") || strings.Contains(sec, "random questions about") {
			t.Errorf("%s: stale, or random questions:\n%s", tc.slug, sec)
		}
	}
	stored, err := a.store.Estimate(ctx, lm.ID)
	if err != nil || stored == nil {
		t.Fatal(stored, err)
	}
	var as estimate.Assumptions
	if err := json.Unmarshal(stored.Assumed, &as); err != nil {
		t.Fatal(err)
	}
	if as.Design != study.DesignLandmarkK1 || as.Config.Landmarks != 3 || as.Config.Seed != 2 {
		t.Errorf("assumed %+v", as)
	}
	st, err := a.store.StudyBySlug(ctx, "arms")
	if err != nil {
		t.Fatal(err)
	}
	if stored, err = a.store.Estimate(ctx, st.ID); err != nil || stored == nil {
		t.Fatal(stored, err)
	}
	as = estimate.Assumptions{}
	var res estimate.Result
	if err := json.Unmarshal(stored.Assumed, &as); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stored.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := []estimate.Arm{{Name: "lmarm", Design: study.DesignLandmarkK1, Config: estimate.DesignConfig{Seed: 2, Repeats: 1, Landmarks: 3}, Share: 0.5},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.5}}
	if !reflect.DeepEqual(as.Arms, want) || as.Questions != 30 || len(res.Arms) != 2 || res.Arms[0].Simulated == 0 || res.Arms[1].Simulated == 0 {
		t.Errorf("arms study: assumed arms %+v, %d questions; result arms %+v", as.Arms, as.Questions, res.Arms)
	}
}

// TestStudyEstimateDeadline: an estimate that cannot finish within its
// share of the request timeout (estimateShare) ends in a 503 saying so,
// before the timeout and not in it, and stores nothing. The
// estimate's limit is 50 ms here (the request's 30 s); an active design's
// refits over 40 items in 5 dimensions take 0.7–4.4 s. Not parallel: one estimate at a time per process.
func TestStudyEstimateDeadline(t *testing.T) { //nolint:paralleltest // one estimate at a time per process (estimateSlot)
	ctx := context.Background()
	a := newAppWithConfig(t, web.Config{EstimateLimit: 50 * time.Millisecond})
	collect.RegisterDesigns(a.store)
	c := a.admin()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "slow", Title: "Slow", QuestionsPerParticipant: 30, Status: study.StatusDraft,
		Design: study.DesignActive, DesignConfig: study.DesignConfig{Seed: 1, Repeats: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:40]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	if err := a.store.SetRecomputeSettings(ctx, st.ID, study.RecomputeSettings{MinNewAnswers: 200, MaxAge: 10 * time.Minute,
		Method: "tste", Dim: 5}); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"pay_per_hour": {"0"}, "currency": {"GBP"}, "seconds_per_question": {"6"}, "wrong_pct": {"10"}, "target_error_pct": {""}}
	// The handler says this only when its own deadline passed and the
	// request's had not (else it returns the request's error): the
	// answer came before the request timeout.
	r := a.do(c, "POST", "/admin/studies/slow/estimate", form, nil)
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(r.body, "the estimate did not finish within") {
		t.Fatalf("an estimate over its time: %d %.400s", r.StatusCode, r.body)
	}
	if e, err := a.store.Estimate(ctx, st.ID); err != nil || e != nil {
		t.Errorf("an estimate over its time stored %+v, %v", e, err)
	}
}
