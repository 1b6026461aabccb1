package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// Every question page keeps the study's instructions one click away, and
// its images carry their labels as alt text; the landing page gives the
// number of questions and an estimated time once.
func TestQuestionPageInstructionsAndAltText(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("inst", 5, 40, "open")
	c := a.client()
	landing := a.do(c, "GET", "/s/inst", nil, nil)
	if !strings.Contains(landing.body, `id="study-size">40 questions, about 2 minutes.<`) || strings.Count(landing.body, "<strong>closer</strong>") != 1 {
		t.Fatalf("landing page:\n%s", landing.body)
	}
	a.do(c, "POST", "/s/inst/start", url.Values{}, nil)
	q := a.do(c, "GET", "/s/inst/q", nil, nil)
	if !strings.Contains(q.body, `<details class="instructions"><summary>Instructions</summary>`) ||
		!strings.Contains(q.body, "Pick the <strong>closer</strong> one.") {
		t.Fatalf("question page without the instructions:\n%s", q.body)
	}
	for _, alt := range []string{`alt="top image: disk-`, `alt="left option: disk-`, `alt="right option: disk-`} {
		if !strings.Contains(q.body, alt) {
			t.Errorf("question page lacks %s", alt)
		}
	}
	// A study without instructions shows no empty panel.
	bare := a.study("bare", 5, 3, "open")
	if _, err := a.store.UpdateStudy(context.Background(), bare.ID, study.StudyInput{Slug: "bare", Title: "Bare",
		QuestionsPerParticipant: 1, Status: "open"}); err != nil {
		t.Fatal(err)
	}
	c = a.client()
	a.do(c, "POST", "/s/bare/start", url.Values{}, nil)
	if q := a.do(c, "GET", "/s/bare/q", nil, nil); strings.Contains(q.body, "instructions") {
		t.Fatalf("a study without instructions shows a panel:\n%s", q.body)
	}
}

// A study with a consent text: the landing page shows it with "I agree"
// and "I do not agree"; declining ends on a page that stores nothing (and
// on Prolific points back there); starting without agreeing is refused;
// agreeing starts, and the same browser later continues without being
// asked again.
func TestConsentStep(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("con", 5, 2, "open")
	ctx := context.Background()
	in := study.StudyInput{Slug: "con", Title: "Con", Instructions: "Look.", Consent: "I know my *answers* are kept.",
		QuestionsPerParticipant: 2, Status: "open",
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "CODE1"}}
	if _, err := a.store.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	c := a.client()
	landing := a.do(c, "GET", "/s/con?PROLIFIC_PID=p1", nil, nil)
	for _, want := range []string{"I know my <em>answers</em> are kept.", `name="consent" value="yes"`, "I agree, start", `href="/s/con/declined"`} {
		if !strings.Contains(landing.body, want) {
			t.Fatalf("landing lacks %q:\n%s", want, landing.body)
		}
	}
	declined := a.do(c, "GET", "/s/con/declined", nil, nil)
	if declined.StatusCode != http.StatusOK || !strings.Contains(declined.body, "Nothing about you was stored") ||
		!strings.Contains(declined.body, `href="https://app.prolific.com/"`) {
		t.Fatalf("declined page: %d\n%s", declined.StatusCode, declined.body)
	}
	if res := a.do(c, "POST", "/s/con/start", url.Values{"external_id": {"p1"}}, nil); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(res.body, "consent") {
		t.Fatalf("start without consent: %d", res.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 0 {
		t.Fatalf("%d participants stored before consent", n)
	}
	if res := a.do(c, "POST", "/s/con/start", url.Values{"external_id": {"p1"}, "consent": {"yes"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start with consent: %d %s", res.StatusCode, res.body)
	}
	if again := a.do(c, "GET", "/s/con", nil, nil); strings.Contains(again.body, "I agree") || !strings.Contains(again.body, "Continue") {
		t.Fatalf("a returning participant is asked to consent again:\n%s", again.body)
	}
	if res := a.do(c, "POST", "/s/con/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("continue: %d %s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 1 {
		t.Fatalf("%d participants, want 1", n)
	}
}
