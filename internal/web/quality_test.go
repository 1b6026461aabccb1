package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// The quality-control settings on the study form: refused with the reason
// when out of range or unreadable, stored and shown again; with "can't
// decide" on, the question page has a third button whose answer counts as
// a question and is no triplet: triplets.csv (with its kind column) leaves
// it out, the all-answers export has it as skipped.
func TestQualitySettingsOnTheForm(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("qc", 6, 6, "open")
	admin := a.admin()
	form := url.Values{"title": {"QC"}, "slug": {"qc"}, "questions_per_participant": {"6"}, "status": {"open"}, "design": {"random"},
		"catch_at": {"4, 2"}, "repeat_pct": {"0"}, "cant_decide": {"on"}, "min_catch_pct": {"80"}, "min_consistency_pct": {"60"}}
	for _, bad := range []struct{ field, value, want string }{
		{"catch_pct", "60", "share of catch trials must be between 0% (off) and 50%"},
		{"catch_at", "2, x", "question numbers for catch trials: &#34;x&#34; is not a question number"},
		{"repeat_at", "7", "repeat trial at question 7"},
		{"catch_pct", "10", "either a share or question numbers"},
		{"min_catch_pct", "120", "catch-trial accuracy"},
	} {
		res := a.do(admin, "POST", "/admin/studies/qc", withField(form, bad.field, bad.value), nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, bad.want) {
			t.Errorf("%s = %q: %d, want 422 saying %q", bad.field, bad.value, res.StatusCode, bad.want)
		}
		if !strings.Contains(res.body, `name="catch_at" value="`+form.Get("catch_at")) && bad.field != "catch_at" {
			t.Errorf("%s = %q: the form shown again lost the catch trials' numbers", bad.field, bad.value)
		}
	}
	if res := a.do(admin, "POST", "/admin/studies/qc", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	edit := a.do(admin, "GET", "/admin/studies/qc/edit", nil, nil)
	for _, want := range []string{`name="catch_at" value="2, 4"`, `name="cant_decide" checked`,
		`name="min_catch_pct" min="0" max="100" value="80"`, `name="min_consistency_pct" min="0" max="100" value="60"`} {
		if !strings.Contains(edit.body, want) {
			t.Errorf("edit form lacks %s", want)
		}
	}

	c := a.client()
	a.do(c, "POST", "/s/qc/start", url.Values{}, nil)
	res := a.do(c, "GET", "/s/qc/q", nil, nil)
	if !strings.Contains(res.body, `name="closer" value="skip"`) || !strings.Contains(res.body, "Can't decide") {
		t.Fatalf("the question page has no \"can't decide\" button:\n%s", res.body)
	}
	qid := questionIDRE.FindStringSubmatch(res.body)[1]
	if res := a.do(c, "POST", "/s/qc/answer", url.Values{"question_id": {qid}, "closer": {"skip"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("skip: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(c, "POST", "/s/qc/answer", url.Values{"question_id": {qid}, "closer": {"maybe"}}, nil); res.StatusCode != http.StatusBadRequest {
		t.Errorf("closer=maybe: %d, want 400", res.StatusCode)
	}
	res = a.do(c, "GET", "/s/qc/q", nil, nil)
	if !strings.Contains(res.body, "1 of 6") {
		t.Errorf("the skip does not count as a question:\n%s", res.body)
	}
	// Question 2 is a catch trial: answer it, the anchor's own image.
	qid2 := questionIDRE.FindStringSubmatch(res.body)[1]
	var anchor string
	if err := a.pool.QueryRow(t.Context(), `SELECT anchor::text FROM questions WHERE id = $1 AND design = 'catch'`, qid2).Scan(&anchor); err != nil {
		t.Fatalf("question 2 is no catch trial: %v", err)
	}
	a.do(c, "POST", "/s/qc/answer", url.Values{"question_id": {qid2}, "closer": {anchor}}, nil)
	res = a.do(c, "GET", "/s/qc/q", nil, nil)
	qid3, left := questionIDRE.FindStringSubmatch(res.body)[1], closerRE.FindStringSubmatch(res.body)[1]
	a.do(c, "POST", "/s/qc/answer", url.Values{"question_id": {qid3}, "closer": {left}}, nil)

	read := func(path string) [][]string {
		t.Helper()
		res := a.do(admin, "GET", path, nil, nil)
		recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, res.StatusCode, err)
		}
		return recs
	}
	trip := read("/admin/studies/qc/triplets.csv")
	if !slices.Equal(trip[0], study.ExportColumns) || trip[0][16] != "kind" || trip[0][len(trip[0])-1] != "arm" {
		t.Errorf("triplets.csv header %v", trip[0])
	}
	if len(trip) != 2 || trip[1][1] != qid3 || trip[1][16] != "design" || trip[1][17] != "random" {
		t.Errorf("triplets.csv: %v; want the one triplet, kind design, arm random", trip[1:])
	}
	all := read("/admin/studies/qc/triplets.csv?all_answers=1")
	if !slices.Equal(all[0], study.AllAnswersColumns) || len(all) != 4 {
		t.Fatalf("all answers: %v", all)
	}
	col := func(rec []string, name string) string { return rec[slices.Index(all[0], name)] }
	if r := all[1]; col(r, "question_id") != qid || col(r, "skipped") != "true" || col(r, "closer") != "" {
		t.Errorf("all answers, the skip: %v", r)
	}
	if r := all[2]; col(r, "kind") != "catch" || col(r, "correct") != "true" || col(r, "closer") != anchor {
		t.Errorf("all answers, the catch trial: %v", r)
	}

	// The participant's figures: participants.csv and the dashboard.
	people := read("/admin/studies/qc/participants.csv")
	pcol := func(name string) string { return people[1][slices.Index(people[0], name)] }
	if len(people) != 2 || pcol("answers") != "3" || pcol("catch_trials") != "1" || pcol("catch_accuracy") != "1" ||
		pcol("repeat_trials") != "0" || pcol("self_consistency") != "" || pcol("skipped") != "1" {
		t.Errorf("participants.csv: %v", people)
	}
	dash := a.do(admin, "GET", "/admin/studies/qc/dashboard", nil, nil)
	if !strings.Contains(dash.body, "Catch right") ||
		!regexp.MustCompile(`<td class="num">–</td><td class="num">100%</td><td class="num">–</td><td class="num">1</td>`).MatchString(dash.body) {
		t.Errorf("the dashboard's participants table lacks the catch accuracy and the skip:\n%s", dash.body)
	}
}

// "Can't decide" through the JSON API: {"skip": true} where the study
// offers it (next says "cant_decide"), refused where it does not (422) or
// sent with a closer (400); the same skip again is 200.
func TestAPICantDecide(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("apiskip", 6, 3, "open")
	j := a.join("apiskip", "")
	var q struct {
		QuestionID string `json:"question_id"`
		Left       struct {
			Index int `json:"index"`
		} `json:"left"`
		CantDecide bool `json:"cant_decide"`
	}
	if res := a.api("GET", "/api/v1/studies/apiskip/next", j.Token, "", &q); res.StatusCode != http.StatusOK || q.CantDecide {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}
	skip := `{"question_id": "` + q.QuestionID + `", "skip": true}`
	if res := a.api("POST", "/api/v1/answers", j.Token, skip, nil); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a skip the study does not offer: %d %s", res.StatusCode, res.body)
	}
	in := study.StudyInput{Slug: "apiskip", Title: st.Title, QuestionsPerParticipant: 3, Status: "open",
		Quality: study.QualityControl{CantDecide: true}}
	if _, err := a.store.UpdateStudy(t.Context(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	if res := a.api("GET", "/api/v1/studies/apiskip/next", j.Token, "", &q); res.StatusCode != http.StatusOK || !q.CantDecide {
		t.Fatalf("next does not say the study takes skips: %s", res.body)
	}
	both := `{"question_id": "` + q.QuestionID + `", "skip": true, "closer": ` + strconv.Itoa(q.Left.Index) + `}`
	if res := a.api("POST", "/api/v1/answers", j.Token, both, nil); res.StatusCode != http.StatusBadRequest {
		t.Errorf("closer and skip: %d, want 400", res.StatusCode)
	}
	for _, want := range []int{http.StatusCreated, http.StatusOK} {
		if res := a.api("POST", "/api/v1/answers", j.Token, skip, nil); res.StatusCode != want {
			t.Fatalf("skip: %d, want %d (%s)", res.StatusCode, want, res.body)
		}
	}
	if n := a.count(`SELECT answered FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Errorf("the skip counts %d questions, want 1", n)
	}
}

// cantDecideStatRE is the dashboard's study-wide "can't decide" count.
var cantDecideStatRE = regexp.MustCompile(`<div class="stat-name">Can&#39;t decide</div><div class="stat-value">(\d+)</div>`)

// The dashboard counts the study's "can't decide" answers beside its other
// totals, every participant's (an excluded one's too: the skips are
// stored); a study that does not offer the button and has no skips does
// not show the count.
func TestDashboardCountsCantDecide(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("skips", 6, 4, "open")
	admin := a.admin()
	stat := func() string {
		t.Helper()
		res := a.do(admin, "GET", "/admin/studies/skips/dashboard", nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("dashboard: %d", res.StatusCode)
		}
		if m := cantDecideStatRE.FindStringSubmatch(res.body); m != nil {
			return m[1]
		}
		return ""
	}
	if got := stat(); got != "" {
		t.Fatalf("a study without \"can't decide\" shows a count of %s", got)
	}
	in := study.StudyInput{Slug: "skips", Title: st.Title, QuestionsPerParticipant: 4, Status: "open",
		Quality: study.QualityControl{CantDecide: true}}
	if _, err := a.store.UpdateStudy(t.Context(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	if got := stat(); got != "0" {
		t.Fatalf("before any skip: %q, want 0", got)
	}
	// Two participants: one skips twice and answers once, the other skips once.
	for p, skips := range []int{2, 1} {
		j := a.join("skips", fmt.Sprintf(`{"external_id": "p%d"}`, p))
		for i := 0; i <= skips; i++ {
			var q nextResp
			if res := a.api("GET", "/api/v1/studies/skips/next", j.Token, "", &q); res.StatusCode != http.StatusOK {
				t.Fatalf("next: %d %s", res.StatusCode, res.body)
			}
			body := `{"question_id": "` + q.QuestionID + `", "skip": true}`
			if i == skips {
				body = `{"question_id": "` + q.QuestionID + `", "closer": ` + strconv.Itoa(q.Left.Index) + `}`
			}
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
	}
	if got := stat(); got != "3" {
		t.Errorf("after three skips: %q, want 3", got)
	}
	// The count stays when the button is turned off again.
	in.Quality.CantDecide = false
	if _, err := a.store.UpdateStudy(t.Context(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	if got := stat(); got != "3" {
		t.Errorf("with the button turned off: %q, want 3", got)
	}
}
