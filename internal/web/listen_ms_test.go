package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// The time spent listening (issue 29): listen_ms sent with an answer, by
// the JSON API or the plain form's hidden field, is stored with it and is
// the last column of the all-answers export (empty when not sent); one out
// of bounds (negative, over an hour) or no whole number is refused with
// 400 and the reason, and nothing of that answer is stored.
func TestListenMS(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.soundStudyWith(study.StudyInput{Slug: "listen", Title: "Listen", QuestionsPerParticipant: 4, Status: study.StatusOpen}, "x")
	stored := func(qid string) (n int, listen *int) {
		t.Helper()
		if err := a.pool.QueryRow(t.Context(), `SELECT count(*), max(listen_ms) FROM answers WHERE question_id = $1`, qid).Scan(&n, &listen); err != nil {
			t.Fatal(err)
		}
		return n, listen
	}

	// The API.
	j := a.join("listen", `{}`)
	var want []string // listen_ms of each answer as exported, in order
	for i, listen := range []string{`, "listen_ms": 4321`, ``} {
		var n formatNext
		if res := a.api("GET", "/api/v1/studies/listen/next", j.Token, "", &n); res.StatusCode != http.StatusOK || n.Left == nil {
			t.Fatalf("next: %d %s", res.StatusCode, res.body)
		}
		if i == 0 {
			for _, bad := range []struct{ value, reason string }{
				{"-1", "listen_ms must be between 0 and 3600000 (one hour)"},
				{"3600001", "listen_ms must be between 0 and 3600000 (one hour)"},
				{`"5000"`, "malformed JSON"},
				{"12.5", "malformed JSON"},
				{"1e30", "malformed JSON"},
			} {
				body := fmt.Sprintf(`{"question_id": %q, "closer": %d, "listen_ms": %s}`, n.QuestionID, n.Left.Index, bad.value)
				res := a.api("POST", "/api/v1/answers", j.Token, body, nil)
				if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, bad.reason) {
					t.Errorf("listen_ms %s: %d %s, want 400 with %q", bad.value, res.StatusCode, res.body, bad.reason)
				}
				if got, _ := stored(n.QuestionID); got != 0 {
					t.Fatalf("listen_ms %s: %d answers stored", bad.value, got)
				}
			}
		}
		body := fmt.Sprintf(`{"question_id": %q, "closer": %d%s}`, n.QuestionID, n.Left.Index, listen)
		if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("answer %s: %d %s", body, res.StatusCode, res.body)
		}
		got, ms := stored(n.QuestionID)
		switch {
		case got != 1:
			t.Fatalf("%s: %d answers stored", body, got)
		case listen == "" && ms != nil:
			t.Errorf("no listen_ms sent, %d stored", *ms)
		case listen != "" && (ms == nil || *ms != 4321):
			t.Errorf("listen_ms 4321 sent, %v stored", ms)
		}
		want = append(want, strings.TrimPrefix(listen, `, "listen_ms": `))
	}

	// The plain form: the question page carries the hidden field.
	c := a.client()
	if res := a.do(c, "POST", "/s/listen/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	page := a.do(c, "GET", "/s/listen/q", nil, nil).body
	if !strings.Contains(page, `<input type="hidden" name="listen_ms" value="">`) {
		t.Fatal("the question page of sounds lacks the listen_ms field")
	}
	qid := questionIDRE.FindStringSubmatch(page)[1]
	form := url.Values{"question_id": {qid}, "closer": {closerRE.FindStringSubmatch(page)[1]}}
	for _, bad := range []struct{ value, reason string }{
		{"ten", "listen_ms must be a whole number of milliseconds"},
		{"-5", "listen_ms must be between 0 and 3600000"},
		{"99999999999", "listen_ms must be between 0 and 3600000"},
	} {
		form.Set("listen_ms", bad.value)
		res := a.do(c, "POST", "/s/listen/answer", form, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, bad.reason) {
			t.Errorf("form listen_ms %q: %d, want 400 with %q: %s", bad.value, res.StatusCode, bad.reason, noticeRE.FindAllString(res.body, -1))
		}
		if got, _ := stored(qid); got != 0 {
			t.Fatalf("form listen_ms %q: %d answers stored", bad.value, got)
		}
	}
	form.Set("listen_ms", "2500")
	if res := a.do(c, "POST", "/s/listen/answer", form, nil); res.StatusCode >= 400 {
		t.Fatalf("form answer: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if got, ms := stored(qid); got != 1 || ms == nil || *ms != 2500 {
		t.Fatalf("form answer: %d stored, listen_ms %v", got, ms)
	}
	want = append(want, "2500")

	// The all-answers export: listen_ms last, in answer order; triplets.csv
	// keeps its columns.
	admin := a.admin()
	res := a.do(admin, "GET", "/admin/studies/listen/triplets.csv?all_answers=1", nil, nil)
	all, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("all answers: %d %v", res.StatusCode, err)
	}
	if !slices.Equal(all[0], study.AllAnswersColumns) || all[0][len(all[0])-1] != "listen_ms" || len(all) != 4 {
		t.Fatalf("all answers: %v", all)
	}
	var got []string
	for _, r := range all[1:] {
		got = append(got, r[len(r)-1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("exported listen_ms %q, want %q", got, want)
	}
	res = a.do(admin, "GET", "/admin/studies/listen/triplets.csv", nil, nil)
	if head, _, _ := strings.Cut(res.body, "\n"); strings.Contains(head, "listen_ms") || head != strings.Join(study.ExportColumns, ",") {
		t.Errorf("triplets.csv header %q", head)
	}
}
