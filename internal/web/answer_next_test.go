package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// answerNextResp is the reply of POST /api/v1/answers with "next": true.
type answerNextResp struct {
	OK   bool            `json:"ok"`
	Next json.RawMessage `json:"next"`
}

// The API's one-round-trip answer: each reply carries the next question
// (the one GET …/next then returns too), the last one the completion code;
// the same answer again replies 200 with the question the participant holds.
func TestAPIAnswerWithNext(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("one", 6, 4, "open")
	j := a.join("one", "")
	var n nextResp
	a.api("GET", "/api/v1/studies/one/next", j.Token, "", &n)
	asked := map[string]bool{}
	for i := 0; i < 4; i++ {
		if n.QuestionID == "" || n.Answered != i || n.Total != 4 || asked[n.QuestionID] {
			t.Fatalf("question %d: %+v", i, n)
		}
		asked[n.QuestionID] = true
		body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": 700, "next": true}`, n.QuestionID, n.Left.Index)
		var r answerNextResp
		res := a.api("POST", "/api/v1/answers", j.Token, body, &r)
		if res.StatusCode != http.StatusCreated || !r.OK {
			t.Fatalf("answer %d: %d %s", i, res.StatusCode, res.body)
		}
		if i == 1 { // the same answer again: 200 and the question they now hold
			var again answerNextResp
			if res := a.api("POST", "/api/v1/answers", j.Token, body, &again); res.StatusCode != http.StatusOK || string(again.Next) != string(r.Next) {
				t.Fatalf("repeat: %d %s, want 200 with %s", res.StatusCode, again.Next, r.Next)
			}
		}
		var next nextResp
		if err := json.Unmarshal(r.Next, &next); err != nil {
			t.Fatalf("next of answer %d: %v in %s", i, err, res.body)
		}
		if i == 3 {
			if !next.Done || len(next.CompletionCode) != 10 || next.QuestionID != "" {
				t.Fatalf("after the last answer: %s", r.Next)
			}
			var done nextResp
			a.api("GET", "/api/v1/studies/one/next", j.Token, "", &done)
			if !done.Done || done.CompletionCode != next.CompletionCode {
				t.Fatalf("GET next after done: %+v, want code %s", done, next.CompletionCode)
			}
			break
		}
		// GET …/next agrees: it is the question the participant holds.
		var held nextResp
		a.api("GET", "/api/v1/studies/one/next", j.Token, "", &held)
		if held.QuestionID != next.QuestionID || held.Answered != i+1 || held.Anchor != next.Anchor || held.Left != next.Left {
			t.Fatalf("GET next %+v, answer's next %+v", held, next)
		}
		if !strings.HasSuffix(next.Anchor.ImageURL, "/img/"+imageHash(t, a, next.Anchor.Index)) {
			t.Fatalf("anchor image %q is not item %d's", next.Anchor.ImageURL, next.Anchor.Index)
		}
		n = next
	}
	if got := a.count(`SELECT count(*) FROM answers`); got != 4 {
		t.Fatalf("%d answers stored, want 4", got)
	}
	if got := a.count(`SELECT answered FROM participants`); got != 4 {
		t.Fatalf("participant counts %d answers, want 4", got)
	}
}

// imageHash is item idx's image hash in the only study with items.
func imageHash(t *testing.T, a *app, idx int) string {
	t.Helper()
	var sum string
	if err := a.pool.QueryRow(context.Background(), `SELECT sha256 FROM items WHERE idx = $1`, idx).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// An answer taken while the study is paused has no next question: "next"
// is null, and nothing is issued beyond the question answered and the one
// issued ahead of it before the pause.
func TestAPIAnswerWithNextPaused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("pz", 6, 4, "open")
	j := a.join("pz", "")
	var n nextResp
	a.api("GET", "/api/v1/studies/pz/next", j.Token, "", &n)
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, study.StudyInput{Slug: "pz", Title: st.Title,
		QuestionsPerParticipant: 4, Status: study.StatusPaused, Design: study.DesignRandom}); err != nil {
		t.Fatal(err)
	}
	var r answerNextResp
	res := a.api("POST", "/api/v1/answers", j.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d, "next": true}`, n.QuestionID, n.Right.Index), &r)
	if res.StatusCode != http.StatusCreated || string(r.Next) != "null" {
		t.Fatalf("paused: %d %s", res.StatusCode, res.body)
	}
	if got := a.count(`SELECT count(*) FROM questions`); got != 2 {
		t.Fatalf("%d questions issued, want the one answered and the one ahead", got)
	}
}

// From app.js (X-Closer-Next) the answer's reply is the next question's
// page, with Content-Location naming the question URL; the plain form keeps
// its 303; the last answer redirects to the done page either way.
func TestAnswerReturnsNextQuestionPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("page", 6, 3, "open")
	c := a.client()
	a.do(c, "POST", "/s/page/start", url.Values{}, nil)
	res := a.do(c, "GET", "/s/page/q", nil, nil)
	js := map[string]string{"X-Closer-Next": "1"}
	for i := range 3 {
		qid := questionIDRE.FindStringSubmatch(res.body)[1]
		opt := closerRE.FindStringSubmatch(res.body)[1]
		form := url.Values{"question_id": {qid}, "closer": {opt}}
		if i == 1 { // the plain form: 303 to the question page
			plain := a.do(c, "POST", "/s/page/answer", form, nil)
			if plain.StatusCode != http.StatusSeeOther || plain.Header.Get("Location") != "/s/page/q" {
				t.Fatalf("plain form: %d %s", plain.StatusCode, plain.Header.Get("Location"))
			}
			res = a.do(c, "GET", "/s/page/q", nil, nil)
			continue
		}
		res = a.do(c, "POST", "/s/page/answer", form, js)
		if i == 2 {
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/page/q" {
				t.Fatalf("last answer: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			break
		}
		m := progressRE.FindStringSubmatch(res.body)
		next := questionIDRE.FindStringSubmatch(res.body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Location") != "/s/page/q" || m == nil || m[1] != strconv.Itoa(i+1) || next == nil || next[1] == qid {
			t.Fatalf("answer %d: %d %q progress %v\n%s", i, res.StatusCode, res.Header.Get("Content-Location"), m, res.body)
		}
		// It is the question the participant now holds.
		if held := a.do(c, "GET", "/s/page/q", nil, nil); !strings.Contains(held.body, next[1]) {
			t.Fatalf("the question page shows another question than the answer's reply")
		}
	}
	if got := a.count(`SELECT count(*) FROM answers`); got != 3 {
		t.Fatalf("%d answers, want 3", got)
	}
}
