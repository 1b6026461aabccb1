package http_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
)

// The same PROLIFIC_PID in a second browser resumes the participant of the
// first: the question it holds, then its completion code; the study never
// holds a second participant for the id, and no second code is issued.
func TestExternalIDSecondBrowserResumes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("pid", 6, 2, "open")
	first, second := a.client(), a.client()
	start := func(c *http.Client) {
		t.Helper()
		res := a.do(c, "POST", "/s/pid/start", url.Values{"external_id": {"PID-7"}}, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/pid/q" {
			t.Fatalf("start: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
	}
	question := func(c *http.Client) (qid, closer string) {
		t.Helper()
		res := a.do(c, "GET", "/s/pid/q", nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("question: %d %s", res.StatusCode, res.body)
		}
		return questionIDRE.FindStringSubmatch(res.body)[1], closerRE.FindStringSubmatch(res.body)[1]
	}
	answer := func(c *http.Client, qid, closer string) {
		t.Helper()
		res := a.do(c, "POST", "/s/pid/answer", url.Values{"question_id": {qid}, "closer": {closer}}, nil)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	start(first)
	q1, c1 := question(first)
	answer(first, q1, c1)
	held, _ := question(first)

	start(second)
	if got, _ := question(second); got != held {
		t.Fatalf("second browser got question %s, want the held %s", got, held)
	}
	q2, c2 := question(second)
	answer(second, q2, c2)
	codeRE := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`)
	done := a.do(second, "GET", "/s/pid/done", nil, nil)
	code := codeRE.FindStringSubmatch(done.body)
	if code == nil {
		t.Fatalf("second browser's done page:\n%s", done.body)
	}
	// The first browser's cookie still works and shows the same code.
	if again := codeRE.FindStringSubmatch(a.do(first, "GET", "/s/pid/done", nil, nil).body); again == nil || again[1] != code[1] {
		t.Fatalf("first browser's code %v, want %s", again, code[1])
	}
	// A third browser after completion: the same participant, done.
	third := a.client()
	start(third)
	if res := a.do(third, "GET", "/s/pid/q", nil, nil); res.Header.Get("Location") != "/s/pid/done" {
		t.Fatalf("third browser: %d to %q, want the done page", res.StatusCode, res.Header.Get("Location"))
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d participants for one PROLIFIC_PID, want 1", n)
	}
	if n := a.count(`SELECT count(DISTINCT completion_code) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d completion codes, want 1", n)
	}
}

// Through the API: the first join is 201, the same external_id again is 200
// with the same participant, a new token and "resumed": true; both tokens
// see the same progress.
func TestAPIExternalIDResumes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("api-pid", 6, 3, "open")
	first := a.join("api-pid", `{"external_id": "worker-9"}`)
	var q nextResp
	if res := a.api("GET", "/api/v1/studies/api-pid/next", first.Token, "", &q); res.StatusCode != 200 {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}
	body := `{"question_id": "` + q.QuestionID + `", "closer": ` + strconv.Itoa(q.Left.Index) + `}`
	if res := a.api("POST", "/api/v1/answers", first.Token, body, nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("answer: %d %s", res.StatusCode, res.body)
	}
	var again struct {
		joinResp
		Resumed bool `json:"resumed"`
	}
	res := a.api("POST", "/api/v1/studies/api-pid/participants", "", `{"external_id": "worker-9"}`, &again)
	if res.StatusCode != http.StatusOK || !again.Resumed || again.ParticipantID != first.ParticipantID ||
		again.Token == "" || again.Token == first.Token {
		t.Fatalf("second join: %d %s", res.StatusCode, res.body)
	}
	for _, tok := range []string{first.Token, again.Token} {
		var n nextResp
		if res := a.api("GET", "/api/v1/studies/api-pid/next", tok, "", &n); res.StatusCode != 200 || n.Answered != 1 {
			t.Fatalf("next with a token of the resumed participant: %d %s", res.StatusCode, res.body)
		}
	}
	// Another id is another participant, 201.
	if other := a.join("api-pid", `{"external_id": "worker-10"}`); other.ParticipantID == first.ParticipantID {
		t.Fatal("another external id resumed worker-9")
	}
}
