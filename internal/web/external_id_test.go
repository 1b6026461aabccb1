package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// concurrentJoins is how many joins with one external id race at once.
const concurrentJoins = 16

// race runs f(0) … f(n-1) at once (each in its own goroutine, released
// together) and returns their errors in order.
func race(n int, f func(i int) error) []error { //nolint:unparam // the number of racers is named at the call
	errs := make([]error, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			errs[i] = f(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return errs
}

// Sixteen browsers start a Prolific study at the same moment with one
// PROLIFIC_PID: every one is let in, as the same participant, and once it
// finished every browser sees the one code; the study holds one participant
// and no other code.
func TestExternalIDConcurrentStarts(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("race", 6, 2, "open")
	admin := a.admin()
	form := url.Values{"title": {"Race"}, "slug": {"race"}, "questions_per_participant": {"2"}, "status": {"open"}, "design": {"random"},
		"platform": {"prolific"}, "completion_code": {"C0DE16"}}
	if res := a.do(admin, "POST", "/admin/studies/race", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save the Prolific study: %d %s", res.StatusCode, res.body)
	}
	clients := make([]*http.Client, concurrentJoins)
	for i := range clients {
		clients[i] = a.client()
	}
	start := url.Values{"external_id": {"PID-RACE"}, "STUDY_ID": {"st1"}, "SESSION_ID": {"se1"}}.Encode()
	errs := race(concurrentJoins, func(i int) error {
		req, _ := http.NewRequest("POST", a.srv.URL+"/s/race/start", strings.NewReader(start))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := clients[i].Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/race/q" {
			return fmt.Errorf("start: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("browser %d: %v", i, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d participants for one PROLIFIC_PID started %d times at once, want 1", n, concurrentJoins)
	}
	// Every browser is that participant: the last one answers, all see the code.
	done := a.finishByForm(clients[concurrentJoins-1], "race")
	codeRE := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`)
	if m := codeRE.FindStringSubmatch(done.body); m == nil || m[1] != "C0DE16" {
		t.Fatalf("done page:\n%s", done.body)
	}
	codes := make([]string, concurrentJoins)
	errs = race(concurrentJoins, func(i int) error {
		res, err := clients[i].Get(a.srv.URL + "/s/race/done")
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if m := codeRE.FindSubmatch(b); res.StatusCode == http.StatusOK && m != nil {
			codes[i] = string(m[1])
			return nil
		}
		return fmt.Errorf("done page: %d %s", res.StatusCode, b)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("browser %d: %v", i, err)
		} else if codes[i] != "C0DE16" {
			t.Errorf("browser %d sees code %q, want C0DE16", i, codes[i])
		}
	}
	if n := a.count(`SELECT count(DISTINCT completion_code) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d completion codes issued, want 1", n)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 2 {
		t.Errorf("%d answers stored, want the participant's 2", n)
	}
}

// Sixteen participants-API joins with one external_id at the same moment:
// exactly one is created (201), the others resume it (200, "resumed") with
// tokens of their own; the sixteen tokens then answer at once, each
// picking the left image, until done: the participant gives exactly the
// study's number of answers, and every token gets the one code (a study
// without a platform gives each participant a code of their own, chosen
// once).
func TestAPIExternalIDConcurrentJoins(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("api-race", 6, 3, "open")
	type joined struct {
		status  int
		id, tok string
		resumed bool
	}
	joins := make([]joined, concurrentJoins)
	errs := race(concurrentJoins, func(i int) error {
		req, _ := http.NewRequest("POST", a.srv.URL+"/api/v1/studies/api-race/participants", strings.NewReader(`{"external_id": "worker-race"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		var body struct {
			ParticipantID string `json:"participant_id"`
			Token         string `json:"token"`
			Resumed       bool   `json:"resumed"`
		}
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			return fmt.Errorf("%d: %v", res.StatusCode, err)
		}
		joins[i] = joined{res.StatusCode, body.ParticipantID, body.Token, body.Resumed}
		return nil
	})
	created := 0
	tokens := map[string]bool{}
	for i, err := range errs {
		j := joins[i]
		switch {
		case err != nil:
			t.Errorf("join %d: %v", i, err)
		case j.status == http.StatusCreated && !j.resumed:
			created++
		case j.status == http.StatusOK && j.resumed:
		default:
			t.Errorf("join %d: %d, resumed %v", i, j.status, j.resumed)
		}
		if j.id != joins[0].id || j.tok == "" || tokens[j.tok] {
			t.Errorf("join %d: participant %q token %q; want participant %q with a token of its own", i, j.id, j.tok, joins[0].id)
		}
		tokens[j.tok] = true
	}
	if created != 1 {
		t.Errorf("%d joins created the participant, want exactly 1", created)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d participants for one external_id joined %d times at once, want 1", n, concurrentJoins)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The tokens race to the end: each asks for the participant's question
	// and answers it (left), until the participant is done.
	codes := make([]string, concurrentJoins)
	errs = race(concurrentJoins, func(i int) error {
		call := func(method, path, body string, out any) (int, error) {
			req, _ := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+joins[i].tok)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, err
			}
			defer res.Body.Close()
			if res.StatusCode < 300 && out != nil {
				return res.StatusCode, json.NewDecoder(res.Body).Decode(out)
			}
			_, err = io.Copy(io.Discard, res.Body)
			return res.StatusCode, err
		}
		for range 50 {
			var n nextResp
			if status, err := call("GET", "/api/v1/studies/api-race/next", "", &n); err != nil || status != http.StatusOK {
				return fmt.Errorf("next: %d %v", status, err)
			}
			if n.Done {
				codes[i] = n.CompletionCode
				return nil
			}
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
			// 201, or 200: another token gave the same answer first.
			status, err := call("POST", "/api/v1/answers", body, nil)
			if err != nil || (status != http.StatusCreated && status != http.StatusOK) {
				return fmt.Errorf("answer: %d %v", status, err)
			}
		}
		return fmt.Errorf("not done after 50 questions")
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("token %d: %v", i, err)
		} else if codes[i] == "" || codes[i] != codes[0] {
			t.Errorf("token %d got code %q, token 0 %q; want one code", i, codes[i], codes[0])
		}
	}
	if n := a.count(`SELECT count(DISTINCT completion_code) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("%d completion codes issued, want 1", n)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 3 {
		t.Errorf("%d answers stored, want the participant's 3", n)
	}
}
