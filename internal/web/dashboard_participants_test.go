package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// tableRow returns the row of the table with class table (in body) that
// shows the participant publicID, or "" when none does.
func tableRow(body, table, publicID string) string {
	i := strings.Index(body, `class="`+table+`"`)
	if i < 0 {
		return ""
	}
	body = body[i:]
	if j := strings.Index(body, "</table>"); j >= 0 {
		body = body[:j]
	}
	for _, row := range strings.Split(body, "<tr") {
		if strings.Contains(row, "<code>"+publicID+"</code>") {
			return row
		}
	}
	return ""
}

var (
	studyPageAnsweredRE = regexp.MustCompile(`<td>(\d+) of \d+</td>`)
	dashboardAnsweredRE = regexp.MustCompile(`<td class="num">(\d+)</td>`) // the first figure of the row
)

// The dashboard's participants table counts a participant's answers as the
// study page's does: every question answered, catch and repeat trials and
// "can't decide" included; and it shows each participant's arm, completion
// code and why they are excluded. Three participants answer through the
// API: one completes with a skip, one fails the catch trial (excluded by
// the study's rule when they finish), one stops after three answers and is
// excluded by the researcher.
func TestDashboardAnswerCountsMatchStudyPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("counts", 8, 6, study.StatusOpen)
	in := study.StudyInput{Slug: "counts", Title: st.Title, QuestionsPerParticipant: 6, Status: study.StatusOpen,
		Exclusion: study.ExclusionRules{MinCatchAccuracy: 0.8},
		Quality:   study.QualityControl{CatchAt: []int{2}, RepeatAt: []int{4}, CantDecide: true}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	admin := a.admin()
	// answer gives n answers: the anchor-identical catch trial right or
	// wrong, the first plain question skipped when skip is set.
	answer := func(j joinResp, n int, catchRight, skip bool) {
		t.Helper()
		for range n {
			var q nextResp
			if res := a.api("GET", "/api/v1/studies/counts/next", j.Token, "", &q); res.StatusCode != http.StatusOK || q.Done {
				t.Fatalf("next: %d %s", res.StatusCode, res.body)
			}
			body := ""
			catch := q.Left.Index == q.Anchor.Index || q.Right.Index == q.Anchor.Index
			switch {
			case catch:
				closer := q.Anchor.Index
				if !catchRight {
					closer = q.Left.Index + q.Right.Index - q.Anchor.Index
				}
				body = fmt.Sprintf(`{"question_id": %q, "closer": %d}`, q.QuestionID, closer)
			case skip:
				skip = false
				body = fmt.Sprintf(`{"question_id": %q, "skip": true}`, q.QuestionID)
			default:
				body = fmt.Sprintf(`{"question_id": %q, "closer": %d}`, q.QuestionID, q.Left.Index)
			}
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
	}
	careful := a.join("counts", `{"external_id": "careful"}`)
	answer(careful, 6, true, true)
	careless := a.join("counts", `{"external_id": "careless"}`)
	answer(careless, 6, false, false)
	partial := a.join("counts", `{"external_id": "partial"}`)
	answer(partial, 3, true, false)
	if r := a.do(admin, "POST", "/admin/studies/counts/participants/"+partial.ParticipantID+"/exclude", map[string][]string{"excluded": {"1"}}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("exclude: %d %s", r.StatusCode, r.body)
	}
	if n := a.count(`SELECT count(*) FROM trial_answers WHERE study_id = $1`, st.ID); n < 5 {
		t.Fatalf("%d trial answers stored: the catch, repeat and skip answers are not exercised", n)
	}

	show := a.do(admin, "GET", "/admin/studies/counts", nil, nil)
	dash := a.do(admin, "GET", "/admin/studies/counts/dashboard", nil, nil)
	if show.StatusCode != http.StatusOK || dash.StatusCode != http.StatusOK {
		t.Fatalf("study page %d, dashboard %d", show.StatusCode, dash.StatusCode)
	}
	if !strings.Contains(dash.body, "Answered<br><small>all questions</small>") {
		t.Error("the dashboard's answer column does not say what it counts")
	}
	if !strings.Contains(show.body, `catch and repeat trials and &quot;can't decide&quot;, as on the dashboard">Answered</th>`) {
		t.Error("the study page's answer column does not say what it counts")
	}
	for _, p := range []struct {
		j       joinResp
		want    int
		reason  string // in the exclusion cell
		hasCode bool
	}{
		{careful, 6, "", true},
		{careless, 6, "excluded automatically: 0% of the catch trials right (the minimum is 80%)", true},
		{partial, 3, "excluded by a researcher", false},
	} {
		id := p.j.ParticipantID
		srow, drow := tableRow(show.body, "list participants", id), tableRow(dash.body, "list quality", id)
		sm, dm := studyPageAnsweredRE.FindStringSubmatch(srow), dashboardAnsweredRE.FindStringSubmatch(drow)
		if sm == nil || dm == nil {
			t.Fatalf("%s: no count on the study page (%q) or the dashboard (%q)", id, srow, drow)
		}
		onStudy, _ := strconv.Atoi(sm[1])
		onDash, _ := strconv.Atoi(dm[1])
		inDB := a.count(`SELECT (SELECT count(*) FROM answers WHERE participant_id = p.id) + (SELECT count(*) FROM trial_answers WHERE participant_id = p.id)
			FROM participants p WHERE p.public_id = $1`, id)
		if onDash != onStudy || onDash != p.want || inDB != p.want {
			t.Errorf("%s: dashboard %d answers, study page %d, stored %d, want %d", id, onDash, onStudy, inDB, p.want)
		}
		var code string
		if err := a.pool.QueryRow(context.Background(), `SELECT coalesce(completion_code, '') FROM participants WHERE public_id = $1`, id).Scan(&code); err != nil {
			t.Fatal(err)
		}
		if (code != "") != p.hasCode {
			t.Fatalf("%s: completion code %q", id, code)
		}
		if code != "" && !strings.Contains(drow, "<code>"+code+"</code>") {
			t.Errorf("%s: the dashboard does not show their code %q: %s", id, code, drow)
		}
		if code == "" && !strings.Contains(drow, "not yet") {
			t.Errorf("%s: no code and the dashboard does not say so: %s", id, drow)
		}
		if p.reason != "" && !strings.Contains(drow, `<small class="reason">`+p.reason+"</small>") {
			t.Errorf("%s: the dashboard does not say %q: %s", id, p.reason, drow)
		}
		if p.reason == "" && strings.Contains(drow, `class="reason"`) {
			t.Errorf("%s: not excluded, and the dashboard gives a reason: %s", id, drow)
		}
	}
}

// The dashboard's participants table lists everyone who answered
// anything, not only those with a triplet: a participant who answered
// only the catch trial, one who answered it and then chose "can't
// decide", and one with a triplet are all listed, with their counts; one
// who joined and answered nothing is not.
func TestDashboardListsParticipantsWithOnlyTrials(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("trials-only", 8, 6, study.StatusOpen)
	in := study.StudyInput{Slug: "trials-only", Title: st.Title, QuestionsPerParticipant: 6, Status: study.StatusOpen,
		Quality: study.QualityControl{CatchAt: []int{1}, CantDecide: true}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	admin := a.admin()
	// answer answers the next question: the catch trial right, a skip, or
	// the left option, and says which kind of question it was.
	answer := func(j joinResp, skip bool) (catch bool) {
		t.Helper()
		var q nextResp
		if res := a.api("GET", "/api/v1/studies/trials-only/next", j.Token, "", &q); res.StatusCode != http.StatusOK || q.Done {
			t.Fatalf("next: %d %s", res.StatusCode, res.body)
		}
		catch = q.Left.Index == q.Anchor.Index || q.Right.Index == q.Anchor.Index
		body := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, q.QuestionID, q.Left.Index)
		switch {
		case catch:
			body = fmt.Sprintf(`{"question_id": %q, "closer": %d}`, q.QuestionID, q.Anchor.Index)
		case skip:
			body = fmt.Sprintf(`{"question_id": %q, "skip": true}`, q.QuestionID)
		}
		if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
		return catch
	}
	catchOnly := a.join("trials-only", `{"external_id": "catch-only"}`)
	if !answer(catchOnly, false) {
		t.Fatal("question 1 is not the catch trial")
	}
	skipper := a.join("trials-only", `{"external_id": "skipper"}`)
	answer(skipper, false)
	if answer(skipper, true) {
		t.Fatal("question 2 is a catch trial, want a plain question to skip")
	}
	triplet := a.join("trials-only", `{"external_id": "triplet"}`)
	answer(triplet, false)
	answer(triplet, false)
	answer(triplet, false)
	silent := a.join("trials-only", `{"external_id": "silent"}`)
	if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, st.ID); n != 2 {
		t.Fatalf("%d triplet answers stored, want the 2 of the third participant", n)
	}

	dash := a.do(admin, "GET", "/admin/studies/trials-only/dashboard", nil, nil)
	if dash.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d %s", dash.StatusCode, dash.body)
	}
	for _, p := range []struct {
		j    joinResp
		want int
	}{{catchOnly, 1}, {skipper, 2}, {triplet, 3}} {
		row := tableRow(dash.body, "list quality", p.j.ParticipantID)
		m := dashboardAnsweredRE.FindStringSubmatch(row)
		if m == nil {
			t.Errorf("%s is not in the dashboard's participants table", p.j.ParticipantID)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n != p.want {
			t.Errorf("%s: %d answers on the dashboard, want %d", p.j.ParticipantID, n, p.want)
		}
	}
	if row := tableRow(dash.body, "list quality", silent.ParticipantID); row != "" {
		t.Errorf("a participant who answered nothing is listed: %s", row)
	}
}
