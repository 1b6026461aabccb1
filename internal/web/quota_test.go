package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A participant limit set on the study form: the page past the limit says
// the study is full (on Prolific: return it there), the API answers 409,
// and nothing is stored for those turned away.
func TestQuotaTurnsAwayPastTheLimit(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("lim", 5, 3, "open")
	admin := a.admin()
	form := url.Values{"title": {"Lim"}, "slug": {"lim"}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"max_participants": {"1"}, "idle_minutes": {"20"}, "platform": {"prolific"}, "completion_code": {"C0"}}
	bad := withField(form, "max_participants", "many")
	if res := a.do(admin, "POST", "/admin/studies/lim", bad, nil); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "participant limit") {
		t.Fatalf("an unreadable limit: %d", res.StatusCode)
	}
	if res := a.do(admin, "POST", "/admin/studies/lim", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	if page := a.do(admin, "GET", "/admin/studies/lim", nil, nil); !strings.Contains(page.body, "at most 1 participants (idle after 20 min)") {
		t.Fatal("the study page does not state the limit")
	}
	if res := a.do(a.client(), "POST", "/s/lim/start", url.Values{"external_id": {"first"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first: %d", res.StatusCode)
	}
	// On a platform a place is taken by answering (invented ids that
	// answer nothing take none): first answers a question.
	if _, err := a.pool.Exec(context.Background(), `UPDATE participants SET answered = 1 WHERE external_id = 'first'`); err != nil {
		t.Fatal(err)
	}
	// The landing page says so before the instructions and the Start
	// button; the one who joined still gets them.
	if res := a.do(a.client(), "GET", "/s/lim?PROLIFIC_PID=second", nil, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, "Lim is full") || strings.Contains(res.body, `action="/s/lim/start"`) {
		t.Fatalf("the landing page past the limit: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(a.client(), "GET", "/s/lim?PROLIFIC_PID=first", nil, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, `action="/s/lim/start"`) {
		t.Fatalf("the landing page of the one who joined: %d\n%s", res.StatusCode, res.body)
	}
	res := a.do(a.client(), "POST", "/s/lim/start", url.Values{"external_id": {"second"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, "Lim is full") || !strings.Contains(res.body, `href="https://app.prolific.com/"`) {
		t.Fatalf("second: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/studies/lim/participants", "", `{"external_id": "third"}`, nil); res.StatusCode != http.StatusConflict ||
		!strings.Contains(res.body, "the study is full") {
		t.Fatalf("API join past the limit: %d %s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 1 {
		t.Fatalf("%d participants stored, want 1", n)
	}
	// The first one comes back in another browser.
	if res := a.do(a.client(), "POST", "/s/lim/start", url.Values{"external_id": {"first"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first again: %d %s", res.StatusCode, res.body)
	}
}

// A follow-up study names the first one on its form: an id from the first
// is refused with a page saying why; the form refuses an unknown slug and
// the study itself, and shows the list again.
func TestRefuseParticipantsOfEarlierStudies(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("first", 5, 3, "open")
	a.study("second", 5, 3, "open")
	admin := a.admin()
	if res := a.do(a.client(), "POST", "/s/first/start", url.Values{"external_id": {"vet"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("joining the first study: %d", res.StatusCode)
	}
	form := url.Values{"title": {"Second"}, "slug": {"second"}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"exclude_studies": {"first"}}
	many := strings.Repeat("nope,", 101)
	for _, c := range []struct{ list, want string }{{"nope", `there is no study &#34;nope&#34;`}, {"first, second", "cannot refuse its own"},
		{many, "at most 100 earlier studies"}} {
		if res := a.do(admin, "POST", "/admin/studies/second", withField(form, "exclude_studies", c.list), nil); res.StatusCode != http.StatusUnprocessableEntity ||
			!strings.Contains(res.body, c.want) {
			t.Fatalf("%q: %d", c.list, res.StatusCode)
		}
	}
	if res := a.do(admin, "POST", "/admin/studies/second", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	if edit := a.do(admin, "GET", "/admin/studies/second/edit", nil, nil); !strings.Contains(edit.body, `name="exclude_studies" value="first"`) {
		t.Fatal("the edit form does not show the list")
	}
	res := a.do(a.client(), "POST", "/s/second/start", url.Values{"external_id": {"vet"}}, nil)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(res.body, "You took part in a related study") {
		t.Fatalf("a veteran joining the second study: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(a.client(), "GET", "/s/second?participant=vet", nil, nil); res.StatusCode != http.StatusForbidden ||
		!strings.Contains(res.body, "You took part in a related study") || strings.Contains(res.body, `action="/s/second/start"`) {
		t.Fatalf("a veteran on the landing page: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(a.client(), "GET", "/s/second?participant=fresh", nil, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, `action="/s/second/start"`) {
		t.Fatalf("a newcomer on the landing page: %d", res.StatusCode)
	}
	if res := a.api("POST", "/api/v1/studies/second/participants", "", `{"external_id": "vet"}`, nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("API: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(a.client(), "POST", "/s/second/start", url.Values{"external_id": {"fresh"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a newcomer: %d", res.StatusCode)
	}
}
