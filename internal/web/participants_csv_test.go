package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

// participants.csv lists every participant oldest first with their ids,
// progress, code, exclusion and the last recompute's quality figures; a
// participant who always picks the left image has a left share of 1, one
// who always picks the right 0. An external id that a spreadsheet would
// run is neutralised.
func TestParticipantsCSV(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("pcsv", 8, 4, "open")
	admin := a.admin()
	ctx := context.Background()
	answerAll := func(ext string, left bool) study.Participant {
		t.Helper()
		p, _, err := a.store.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			pr, err := a.store.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				return p
			}
			c := pr.Question.Options[1].Index
			if left {
				c = pr.Question.Options[0].Index
			}
			if _, err := a.store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lefty := answerAll("=HYPERLINK(1)", true)
	righty := answerAll("r-1", false)
	if err := a.store.SetExcluded(ctx, st.ID, righty.PublicID, true); err != nil {
		t.Fatal(err)
	}
	idle, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() [][]string {
		t.Helper()
		res := a.do(admin, "GET", "/admin/studies/pcsv/participants.csv", nil, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("participants.csv: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(recs[0], ",") != strings.Join(web.ParticipantsColumns, ",") || len(recs) != 4 {
			t.Fatalf("participants.csv:\n%s", res.body)
		}
		return recs[1:]
	}
	col := func(name string) int {
		for i, c := range web.ParticipantsColumns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	// Before any recompute: the people, no figures.
	rows := read()
	if rows[0][0] != lefty.PublicID || rows[1][0] != righty.PublicID || rows[2][0] != idle.PublicID {
		t.Fatalf("order %v %v %v, want oldest first", rows[0][0], rows[1][0], rows[2][0])
	}
	if rows[0][col("external_id")] != "'=HYPERLINK(1)" || rows[0][col("answers")] != "4" || rows[0][col("completion_code")] == "" ||
		rows[0][col("completed_at")] == "" || rows[0][col("left_share")] != "" {
		t.Fatalf("first participant before a recompute: %v", rows[0])
	}
	if rows[1][col("excluded")] != "true" || rows[0][col("excluded")] != "false" || rows[2][col("answers")] != "0" || rows[2][col("completed_at")] != "" {
		t.Fatalf("rows: %v", rows)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	rows = read()
	if rows[0][col("left_share")] != "1" || rows[1][col("left_share")] != "0" || rows[2][col("left_share")] != "" {
		t.Fatalf("left shares %q %q %q, want 1, 0 and none", rows[0][col("left_share")], rows[1][col("left_share")], rows[2][col("left_share")])
	}
	if rows[0][col("median_response_ms")] != "" || rows[0][col("embedding_agreement")] == "" {
		t.Fatalf("figures of the first participant: %v", rows[0])
	}
}

// participantsCSV reads a study's participants.csv as rows keyed by
// external id, each a map from column to value.
func (a *app) participantsCSV(admin *http.Client, slug string) map[string]map[string]string {
	a.t.Helper()
	res := a.do(admin, "GET", "/admin/studies/"+slug+"/participants.csv", nil, nil)
	recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil {
		a.t.Fatalf("participants.csv: %d %v\n%s", res.StatusCode, err, res.body)
	}
	if strings.Join(recs[0], ",") != strings.Join(web.ParticipantsColumns, ",") {
		a.t.Fatalf("participants.csv header %v", recs[0])
	}
	out := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, c := range recs[0] {
			row[c] = rec[i]
		}
		out[row["external_id"]] = row
	}
	return out
}

// participants.csv's fast_share counts the answers under the study's
// exclusion-rule threshold for very fast answers when it sets one (here
// 400 ms, with the rule itself off), else under 1000 ms, and says which in
// fast_share_under_ms; the kept platform parameters (Prolific's STUDY_ID
// and SESSION_ID, MTurk's assignmentId and hitId) are the last columns,
// neutralised for spreadsheets like every other text. The columns before
// them are unchanged.
func TestParticipantsCSVFastThresholdAndPlatformParams(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	pro := a.study("pro", 6, 3, "open")
	admin := a.admin()
	form := url.Values{"title": {"Pro"}, "slug": {"pro"}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"platform": {"prolific"}, "completion_code": {"C1A2B3"}, "fast_ms": {"400"}, "max_fast_pct": {"0"}}
	if res := a.do(admin, "POST", "/admin/studies/pro", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	c := a.client()
	start := url.Values{"external_id": {"5f1e"}, "STUDY_ID": {"st77"}, "SESSION_ID": {"=1+1"}}
	if res := a.do(c, "POST", "/s/pro/start", start, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	// Every answer takes 700 ms: very fast under 1000 ms, not under 400 ms.
	for range 3 {
		res := a.do(c, "GET", "/s/pro/q", nil, nil)
		qid, closer := questionIDRE.FindStringSubmatch(res.body), closerRE.FindStringSubmatch(res.body)
		if qid == nil || closer == nil {
			t.Fatalf("question page: %d\n%s", res.StatusCode, res.body)
		}
		if r := a.do(c, "POST", "/s/pro/answer", url.Values{"question_id": {qid[1]}, "closer": {closer[1]}, "response_ms": {"700"}}, nil); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("answer: %d %s", r.StatusCode, r.body)
		}
	}
	if row := a.participantsCSV(admin, "pro")["5f1e"]; row["fast_share"] != "" || row["fast_share_under_ms"] != "" ||
		row["STUDY_ID"] != "st77" || row["SESSION_ID"] != "'=1+1" || row["assignmentId"] != "" || row["hitId"] != "" {
		t.Fatalf("before a recompute: %v", row)
	}
	if _, err := recompute.Run(t.Context(), a.store, pro.ID, 0); err != nil {
		t.Fatal(err)
	}
	if row := a.participantsCSV(admin, "pro")["5f1e"]; row["fast_share"] != "0" || row["fast_share_under_ms"] != "400" {
		t.Errorf("with a 400 ms threshold: fast_share %q under %q ms, want 0 under 400", row["fast_share"], row["fast_share_under_ms"])
	}
	if page := a.do(admin, "GET", "/admin/studies/pro/dashboard", nil, nil); !strings.Contains(page.body, "very fast: under 400 ms") {
		t.Errorf("the dashboard does not say the threshold is 400 ms")
	}

	// An MTurk study without exclusion rules: 1000 ms; the assignment and
	// the HIT.
	mt := a.study("hit", 6, 3, "open")
	mturkStudy(a, admin, "hit", nil)
	a.finishHIT(noCookies(), "hit", a.startHIT(noCookies(), "hit", "W1", "A1", mturkSandbox))
	j := a.join("hit", `{"external_id": "api-1"}`)
	for range 3 {
		var n nextResp
		a.api("GET", "/api/v1/studies/hit/next", j.Token, "", &n)
		body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": 700}`, n.QuestionID, n.Left.Index)
		if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	if _, err := recompute.Run(t.Context(), a.store, mt.ID, 0); err != nil {
		t.Fatal(err)
	}
	rows := a.participantsCSV(admin, "hit")
	if w := rows["W1"]; w["assignmentId"] != "A1" || w["hitId"] != "HIT1" || w["STUDY_ID"] != "" || w["fast_share"] != "" || w["fast_share_under_ms"] != "" {
		t.Errorf("the MTurk worker (no response times): %v", w)
	}
	if p := rows["api-1"]; p["fast_share"] != "1" || p["fast_share_under_ms"] != "1000" {
		t.Errorf("without a rule: fast_share %q under %q ms, want 1 under 1000", p["fast_share"], p["fast_share_under_ms"])
	}
	if page := a.do(admin, "GET", "/admin/studies/hit/dashboard", nil, nil); !strings.Contains(page.body, "very fast: under 1000 ms") {
		t.Errorf("the dashboard does not say the threshold is 1000 ms")
	}
}
