package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

type apiItem struct {
	Index    int    `json:"index"`
	Label    string `json:"label"`
	ImageURL string `json:"image_url"`
}

type nextResp struct {
	QuestionID     string    `json:"question_id"`
	Format         string    `json:"format"`
	Options        []apiItem `json:"options"`
	Anchor         apiItem   `json:"anchor"`
	Left           apiItem   `json:"left"`
	Right          apiItem   `json:"right"`
	Answered       int       `json:"answered"`
	Total          int       `json:"total"`
	Done           bool      `json:"done"`
	CompletionCode string    `json:"completion_code"`
	AheadImages    []string  `json:"ahead_images"`
}

type joinResp struct {
	ParticipantID string `json:"participant_id"`
	Token         string `json:"token"`
}

// join creates a participant through the API.
func (a *app) join(slug, body string) joinResp {
	a.t.Helper()
	var j joinResp
	if res := a.api("POST", "/api/v1/studies/"+slug+"/participants", "", body, &j); res.StatusCode != http.StatusCreated || j.Token == "" {
		a.t.Fatalf("join: %d %s", res.StatusCode, res.body)
	}
	return j
}

// The whole flow through the JSON API, and the CSV export (by API token and
// by admin session) equal to the answers given.
func TestAPIFlowAndExport(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("api", 7, 6, "open")
	var given []triplet.Triplet
	for p := 0; p < 2; p++ {
		j := a.join("api", fmt.Sprintf(`{"external_id": "w%d"}`, p))
		for i := 0; ; i++ {
			var n nextResp
			if res := a.api("GET", "/api/v1/studies/api/next", j.Token, "", &n); res.StatusCode != 200 {
				t.Fatalf("next: %d %s", res.StatusCode, res.body)
			}
			if n.Done {
				if i != 6 || n.CompletionCode == "" {
					t.Fatalf("done after %d answers, code %q", i, n.CompletionCode)
				}
				break
			}
			if n.Answered != i || n.Total != 6 || n.Anchor.ImageURL == "" || n.Left.Label == "" {
				t.Fatalf("next %+v at %d", n, i)
			}
			// The format's vocabulary: a triplet's options are left and right.
			if n.Format != "triplet" || len(n.Options) != 2 || n.Options[0] != n.Left || n.Options[1] != n.Right {
				t.Fatalf("next at %d: format %q, options %+v; want a triplet whose options are left %+v and right %+v", i, n.Format, n.Options, n.Left, n.Right)
			}
			closer, farther := n.Left.Index, n.Right.Index
			if i%3 == 0 {
				closer, farther = farther, closer
			}
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": %d}`, n.QuestionID, closer, 500+i)
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated || strings.TrimSpace(res.body) != `{"ok":true}` {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
			given = append(given, triplet.Triplet{Anchor: n.Anchor.Index, Closer: closer, Farther: farther})
		}
	}
	admin, _ := a.accounts.CreateAdmin(context.Background(), "x@example.org", "long-password")
	secret, _, err := a.accounts.CreateAPIToken(context.Background(), admin.ID, "script")
	if err != nil {
		t.Fatal(err)
	}
	res := a.api("GET", "/api/v1/studies/api/triplets.csv", secret, "", nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %s", res.StatusCode, res.body)
	}
	exported := res.body
	recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := "study,question_id,participant,external_id,anchor,closer,farther,anchor_label,closer_label,farther_label,left,right,design,response_ms,asked_at,answered_at,kind,arm"
	if strings.Join(recs[0], ",") != wantHeader {
		t.Fatalf("header %v", recs[0])
	}
	if len(recs)-1 != len(given) {
		t.Fatalf("%d rows, %d answers given", len(recs)-1, len(given))
	}
	for i, r := range recs[1:] {
		an, _ := strconv.Atoi(r[4])
		cl, _ := strconv.Atoi(r[5])
		fa, _ := strconv.Atoi(r[6])
		if (triplet.Triplet{Anchor: an, Closer: cl, Farther: fa}) != given[i] || r[0] != "api" || r[12] != "random" {
			t.Fatalf("row %d %v, want %v", i, r, given[i])
		}
		if r[7] != fmt.Sprintf("disk-%02d", an+1) || r[3] != fmt.Sprintf("w%d", i/6) {
			t.Fatalf("row %d labels or external id: %v", i, r)
		}
	}
	// Without a token, or with a revoked one: 401.
	if res := a.api("GET", "/api/v1/studies/api/triplets.csv", "", "", nil); res.StatusCode != 401 {
		t.Fatalf("export without token: %d", res.StatusCode)
	}
	tokens, _ := a.accounts.ListAPITokens(context.Background(), admin.ID)
	if err := a.accounts.RevokeAPIToken(context.Background(), admin.ID, tokens[0].ID); err != nil {
		t.Fatal(err)
	}
	if res := a.api("GET", "/api/v1/studies/api/triplets.csv", secret, "", nil); res.StatusCode != 401 {
		t.Fatalf("export with revoked token: %d", res.StatusCode)
	}
	// The admin page's export gives the same bytes.
	c := a.admin()
	page := a.do(c, "GET", "/admin/studies/api/triplets.csv", nil, nil)
	if page.StatusCode != 200 || page.body != exported {
		t.Fatalf("admin export differs from the API's: %d", page.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != len(given) {
		t.Fatalf("%d answers stored, %d given", n, len(given))
	}
}

// Forged and invalid answers are refused with the documented status and
// store nothing; the same answer twice stores one row.
func TestAPIAnswerRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("r", 6, 5, "open")
	p1, p2 := a.join("r", ""), a.join("r", `{"external_id": ""}`)
	var n nextResp
	a.api("GET", "/api/v1/studies/r/next", p1.Token, "", &n)
	other := 0
	for other == n.Left.Index || other == n.Right.Index {
		other++
	}
	stored := func() int {
		return a.count(`SELECT count(*) FROM answers`) + a.count(`SELECT coalesce(sum(j_closer + k_closer), 0) FROM votes`) +
			a.count(`SELECT coalesce(sum(answered), 0) FROM participants`)
	}
	cases := []struct {
		name, token, body string
		status            int
	}{
		{"no token", "", fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index), 401},
		{"bad token", "nope", fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index), 401},
		{"forged: another participant's question", p2.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index), 403},
		{"closer not an option", p1.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, other), 422},
		{"negative response time", p1.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": -5}`, n.QuestionID, n.Left.Index), 422},
		{"malformed JSON", p1.Token, `{"question_id": `, 400},
		{"unknown field", p1.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d, "extra": 1}`, n.QuestionID, n.Left.Index), 400},
		{"wrong type", p1.Token, fmt.Sprintf(`{"question_id": %q, "closer": "left"}`, n.QuestionID), 400},
		{"missing closer", p1.Token, fmt.Sprintf(`{"question_id": %q}`, n.QuestionID), 400},
		{"trailing data", p1.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d} {}`, n.QuestionID, n.Left.Index), 400},
		{"empty body", p1.Token, ``, 400},
		{"unknown question", p1.Token, fmt.Sprintf(`{"question_id": "zzz", "closer": %d}`, n.Left.Index), 404},
	}
	for _, c := range cases { //nolint:paralleltest // subtests share one app's participant
		t.Run(c.name, func(t *testing.T) {
			res := a.api("POST", "/api/v1/answers", c.token, c.body, nil)
			if res.StatusCode != c.status || !strings.Contains(res.body, `"error":`) {
				t.Errorf("%d %s, want %d and a JSON error", res.StatusCode, res.body, c.status)
			}
			if s := stored(); s != 0 {
				t.Fatalf("stored something (%d)", s)
			}
		})
	}
	ok := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": 10}`, n.QuestionID, n.Right.Index)
	if res := a.api("POST", "/api/v1/answers", p1.Token, ok, nil); res.StatusCode != 201 {
		t.Fatalf("answer: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/answers", p1.Token, ok, nil); res.StatusCode != 200 || strings.TrimSpace(res.body) != `{"ok":true}` {
		t.Fatalf("same answer again: %d %s", res.StatusCode, res.body)
	}
	diff := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
	if res := a.api("POST", "/api/v1/answers", p1.Token, diff, nil); res.StatusCode != 409 {
		t.Fatalf("different choice: %d %s", res.StatusCode, res.body)
	}
	if s := stored(); s != 3 {
		t.Fatalf("after one answer (three times): %d things stored, want 1 answer + 1 vote + 1 answered question", s)
	}
}

func TestAPINextErrors(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("one", 4, 3, "open")
	a.study("two", 4, 3, "open")
	st3 := a.study("three", 4, 3, "open")
	j := a.join("one", "")
	j3 := a.join("three", "")
	if res := a.api("GET", "/api/v1/studies/nope/next", j.Token, "", nil); res.StatusCode != 404 {
		t.Fatalf("unknown study: %d", res.StatusCode)
	}
	if res := a.api("GET", "/api/v1/studies/two/next", j.Token, "", nil); res.StatusCode != 403 {
		t.Fatalf("token of another study: %d", res.StatusCode)
	}
	if res := a.api("GET", "/api/v1/studies/one/next", "", "", nil); res.StatusCode != 401 {
		t.Fatalf("no token: %d", res.StatusCode)
	}
	if _, err := a.pool.Exec(context.Background(), `UPDATE studies SET status = 'paused' WHERE id = $1`, st3.ID); err != nil {
		t.Fatal(err)
	}
	if res := a.api("GET", "/api/v1/studies/three/next", j3.Token, "", nil); res.StatusCode != 409 {
		t.Fatalf("paused study: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/studies/three/participants", "", "", nil); res.StatusCode != 409 {
		t.Fatalf("join paused study: %d", res.StatusCode)
	}
	if res := a.api("POST", "/api/v1/studies/one/participants", "", `{"externalid": "x"}`, nil); res.StatusCode != 400 {
		t.Fatalf("join with unknown field: %d", res.StatusCode)
	}
	// Asking again returns the same question.
	var n1, n2 nextResp
	a.api("GET", "/api/v1/studies/one/next", j.Token, "", &n1)
	a.api("GET", "/api/v1/studies/one/next", j.Token, "", &n2)
	if n1.QuestionID == "" || n1.QuestionID != n2.QuestionID {
		t.Fatalf("two different pending questions: %q %q", n1.QuestionID, n2.QuestionID)
	}
}
