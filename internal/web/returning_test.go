package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// A Prolific participant who comes back with their PROLIFIC_PID in a
// browser that holds no cookie of theirs (issue 26: they were shown the
// consent again, and declining said nothing about them was stored) is
// shown where they are: half-way, a welcome back with their count and a
// Continue that needs no consent; finished, their code and the way back.
func TestReturningParticipantNeverAskedConsentAgain(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("back", 6, 3, "open")
	in := study.StudyInput{Slug: "back", Title: "Back", Instructions: "Look.", Consent: "I agree to *this*.",
		QuestionsPerParticipant: 3, Status: "open",
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "CODE42"}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	answerOne := func(c *http.Client) {
		t.Helper()
		q := a.do(c, "GET", "/s/back/q", nil, nil)
		if q.StatusCode != http.StatusOK {
			t.Fatalf("question: %d %s", q.StatusCode, q.body)
		}
		res := a.do(c, "POST", "/s/back/answer", url.Values{"question_id": {questionIDRE.FindStringSubmatch(q.body)[1]},
			"closer": {closerRE.FindStringSubmatch(q.body)[1]}}, nil)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	join := func(pid string) *http.Client {
		t.Helper()
		c := a.client()
		res := a.do(c, "POST", "/s/back/start", url.Values{"external_id": {pid}, "consent": {"yes"}}, nil)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("start %s: %d %s", pid, res.StatusCode, res.body)
		}
		return c
	}

	// Half-way: one answer of three, then a new browser.
	answerOne(join("half"))
	other := a.client()
	landing := a.do(other, "GET", "/s/back?PROLIFIC_PID=half", nil, nil)
	if landing.StatusCode != http.StatusOK || strings.Contains(landing.body, `name="consent"`) || strings.Contains(landing.body, "I do not agree") ||
		!strings.Contains(landing.body, `id="welcome-back"`) || !strings.Contains(landing.body, "You have answered 1 of 3 questions") ||
		!strings.Contains(landing.body, "Continue") {
		t.Fatalf("a returning participant's landing: %d\n%s", landing.StatusCode, landing.body)
	}
	// Continue, without a consent field: the same participant, at question 2.
	res := a.do(other, "POST", "/s/back/start", url.Values{"external_id": {"half"}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("continue: %d %s", res.StatusCode, res.body)
	}
	if q := a.do(other, "GET", "/s/back/q", nil, nil); !strings.Contains(q.body, "1 of 3") {
		t.Fatalf("after continuing: %d\n%.2000s", q.StatusCode, q.body)
	}

	// Finished: all three answers, then a new browser.
	done := join("done")
	for range 3 {
		answerOne(done)
	}
	landing = a.do(a.client(), "GET", "/s/back?PROLIFIC_PID=done", nil, nil)
	if landing.StatusCode != http.StatusOK || strings.Contains(landing.body, `name="consent"`) ||
		!strings.Contains(landing.body, `id="completion-code">CODE42<`) || !strings.Contains(landing.body, "https://app.prolific.com/submissions/complete?cc=CODE42") {
		t.Fatalf("a finished participant's landing: %d\n%s", landing.StatusCode, landing.body)
	}

	// Someone new still gets the consent, and one who never agreed cannot
	// start without it.
	if l := a.do(a.client(), "GET", "/s/back?PROLIFIC_PID=new", nil, nil); !strings.Contains(l.body, `name="consent" value="yes"`) {
		t.Fatalf("a new participant's landing has no consent:\n%s", l.body)
	}
	if r := a.do(a.client(), "POST", "/s/back/start", url.Values{"external_id": {"new"}}, nil); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("a new participant started without consent: %d", r.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 2 {
		t.Errorf("%d participants, want 2", n)
	}
}

// A consent text that begins with its own heading gets no second one from
// the page (issue 26: "Consent" over the researcher's "# Consent form");
// one without gets the page's.
func TestConsentHeadingNotDoubled(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, c := range []struct {
		slug, consent string
		pageHeading   bool
	}{{"titled", "## Information and consent\n\nI agree.", false}, {"plain", "I agree.", true}, {"tag", "#1 rule: I agree.", true}} {
		st := a.study(c.slug, 5, 2, "open")
		in := study.StudyInput{Slug: c.slug, Title: c.slug, QuestionsPerParticipant: 2, Status: "open", Consent: c.consent}
		if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
			t.Fatal(err)
		}
		page := a.do(a.client(), "GET", "/s/"+c.slug, nil, nil).body
		i := strings.Index(page, `<section class="consent"`)
		if i < 0 {
			t.Fatalf("%s: no consent section:\n%s", c.slug, page)
		}
		section := page[i : i+strings.Index(page[i:], "</section>")]
		if got := strings.Contains(section, `id="consent-title"`); got != c.pageHeading || strings.Count(section, "<h2") != 1 && c.slug == "titled" {
			t.Errorf("%s: page's heading %v, want %v:\n%s", c.slug, got, c.pageHeading, section)
		}
	}
}
