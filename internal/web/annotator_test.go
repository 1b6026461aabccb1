package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The whole annotator flow through the real router without JavaScript:
// landing, start, every question by form POST (one of them submitted twice),
// debrief and completion code.
func TestAnnotatorFlowHTML(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("flow", 6, 5, "open")
	c := a.client()

	res := a.do(c, "GET", "/s/flow?PROLIFIC_PID=prolific-42", nil, nil)
	if res.StatusCode != 200 || !strings.Contains(res.body, "<strong>closer</strong>") || !strings.Contains(res.body, `value="prolific-42"`) {
		t.Fatalf("landing: %d\n%s", res.StatusCode, res.body)
	}
	res = a.do(c, "POST", "/s/flow/start", url.Values{"external_id": {"prolific-42"}}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/flow/q" {
		t.Fatalf("start: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "closer_participant" {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/s/flow" {
		t.Fatalf("participant cookie %+v", cookie)
	}

	for i := 0; i < 5; i++ {
		res = a.do(c, "GET", "/s/flow/q", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("question %d: %d %s", i, res.StatusCode, res.body)
		}
		if !strings.Contains(res.body, "Which is more similar to the top image?") {
			t.Fatalf("question page without the prompt:\n%s", res.body)
		}
		m := progressRE.FindStringSubmatch(res.body)
		if m == nil || m[1] != strconv.Itoa(i) || m[2] != "5" {
			t.Fatalf("progress %v, want %d of 5", m, i)
		}
		qid := questionIDRE.FindStringSubmatch(res.body)[1]
		opts := closerRE.FindAllStringSubmatch(res.body, -1)
		if len(opts) != 2 {
			t.Fatalf("want two options, got %v", opts)
		}
		// Reloading shows the same pending question.
		if again := a.do(c, "GET", "/s/flow/q", nil, nil); !strings.Contains(again.body, qid) {
			t.Fatalf("reload issued another question")
		}
		form := url.Values{"question_id": {qid}, "closer": {opts[0][1]}, "response_ms": {"1234"}}
		res = a.do(c, "POST", "/s/flow/answer", form, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/flow/q" {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
		if i == 2 { // a double click: the same form again
			res = a.do(c, "POST", "/s/flow/answer", form, nil)
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("resubmit: %d %s", res.StatusCode, res.body)
			}
		}
	}
	res = a.do(c, "GET", "/s/flow/q", nil, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/flow/done" {
		t.Fatalf("after the last question: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res = a.do(c, "GET", "/s/flow/done", nil, nil)
	code := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`).FindStringSubmatch(res.body)
	if res.StatusCode != 200 || code == nil || !strings.Contains(res.body, "<em>friend</em>") {
		t.Fatalf("done page: %d\n%s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 5 {
		t.Fatalf("%d answers stored, want 5", n)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1 AND external_id = 'prolific-42' AND completion_code = $2`, st.ID, code[1]); n != 1 {
		t.Fatalf("participant with external id and code: %d", n)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE response_ms = 1234`); n != 5 {
		t.Fatalf("response times stored: %d", n)
	}
	// The researcher sees the participant, their external id and code.
	page := a.do(a.admin(), "GET", "/admin/studies/flow", nil, nil)
	for _, want := range []string{"prolific-42", code[1], "5 of 5"} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("study page lacks %q", want)
		}
	}
	// A new visit with the same browser resumes (and is done).
	res = a.do(c, "POST", "/s/flow/start", url.Values{}, nil)
	if res.Header.Get("Location") != "/s/flow/q" || a.count(`SELECT count(*) FROM participants`) != 1 {
		t.Fatalf("resume created a participant")
	}
}

func TestAnswerConflictPageAndBadForm(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("c", 5, 3, "open")
	c := a.client()
	a.do(c, "POST", "/s/c/start", url.Values{}, nil)
	res := a.do(c, "GET", "/s/c/q", nil, nil)
	qid := questionIDRE.FindStringSubmatch(res.body)[1]
	opts := closerRE.FindAllStringSubmatch(res.body, -1)
	a.do(c, "POST", "/s/c/answer", url.Values{"question_id": {qid}, "closer": {opts[0][1]}}, nil)
	res = a.do(c, "POST", "/s/c/answer", url.Values{"question_id": {qid}, "closer": {opts[1][1]}}, nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(res.body, "first answer counts") {
		t.Fatalf("other choice: %d %s", res.StatusCode, res.body)
	}
	res = a.do(c, "POST", "/s/c/answer", url.Values{"question_id": {qid}, "closer": {"x"}}, nil)
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad closer: %d", res.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM answers`); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
}

func TestPausedAndClosedStudiesShowFriendlyPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("p", 5, 3, "paused")
	a.study("cl", 5, 3, "closed")
	c := a.client()
	for path, want := range map[string]string{"/s/p": "is paused", "/s/cl": "is closed", "/s/p/q": "Study p"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			res := a.do(c, "GET", path, nil, nil)
			if path == "/s/p/q" {
				// no participant yet: back to the landing page
				if res.StatusCode != http.StatusSeeOther {
					t.Fatalf("%d", res.StatusCode)
				}
				return
			}
			if res.StatusCode != 200 || !strings.Contains(res.body, want) {
				t.Fatalf("%d %s", res.StatusCode, res.body)
			}
		})
	}
	if res := a.do(c, "GET", "/s/nope", nil, nil); res.StatusCode != 404 {
		t.Fatalf("unknown study: %d", res.StatusCode)
	}
}

func TestItemImageCaching(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("img", 3, 3, "open")
	items, _ := a.store.ListItems(t.Context(), st.ID)
	path := "/img/" + items[0].SHA256
	res := a.do(http.DefaultClient, "GET", path, nil, nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("ETag") != `"`+items[0].SHA256+`"` {
		t.Fatalf("image: %d %v", res.StatusCode, res.Header)
	}
	res = a.do(http.DefaultClient, "GET", path, nil, map[string]string{"If-None-Match": res.Header.Get("ETag")})
	if res.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d", res.StatusCode)
	}
	if res := a.do(http.DefaultClient, "GET", "/img/"+strings.Repeat("0", 64), nil, nil); res.StatusCode != 404 {
		t.Fatalf("unknown image: %d", res.StatusCode)
	}
}

func TestUnknownRoutesAndHeaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	res := a.do(http.DefaultClient, "GET", "/nowhere", nil, nil)
	if res.StatusCode != 404 || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("unknown page: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	res = a.do(http.DefaultClient, "GET", "/api/v1/nowhere", nil, nil)
	if res.StatusCode != 404 || !strings.HasPrefix(res.body, `{"error":`) {
		t.Fatalf("unknown API route: %d %s", res.StatusCode, res.body)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if res.Header.Get(h) == "" {
			t.Errorf("missing %s", h)
		}
	}
	if res := a.do(http.DefaultClient, "GET", "/static/app.js", nil, nil); res.StatusCode != 200 || !strings.Contains(res.body, "ArrowLeft") {
		t.Fatalf("static js: %d", res.StatusCode)
	}
	if res := a.do(http.DefaultClient, "GET", "/healthz", nil, nil); res.StatusCode != 200 {
		t.Fatalf("healthz: %d", res.StatusCode)
	}
}
