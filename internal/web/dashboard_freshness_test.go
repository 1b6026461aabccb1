package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// answerSome has participant p answer n questions (each one's left option
// closer).
func answerSome(t *testing.T, store *collect.Store, p study.Participant, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		pr, err := store.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done {
			t.Fatalf("participant %s is done", p.PublicID)
		}
		if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
}

// freshStatus is what the dashboard's status JSON says about the figures.
type freshStatus struct {
	State             string `json:"state"`
	Newer             int    `json:"newer_answers"`
	ExclusionsChanged bool   `json:"exclusions_changed"`
}

// dashStatus reads study slug's dashboard status JSON.
func dashStatus(t *testing.T, a *app, c *http.Client, slug string) freshStatus {
	t.Helper()
	var out freshStatus
	res := a.do(c, "GET", "/admin/studies/"+slug+"/dashboard/status", nil, nil)
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatalf("status: %v\n%s", err, res.body)
	}
	return out
}

// The dashboard says "up to date" only when the latest recompute read every
// answer stored; otherwise it says how many answers are newer, on the page
// and in the status JSON. An excluded participant's answers count as read
// (the run read them and left them out on purpose).
func TestDashboardSaysWhatIsNewer(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("fresh", 8, 50, "open")
	admin := a.admin()
	ctx := context.Background()
	p1, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	answerSome(t, a.store, p1, 12)
	answerSome(t, a.store, p2, 5)
	if err := a.store.SetExcluded(ctx, st.ID, p2.PublicID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if s := dashStatus(t, a, admin, "fresh"); !strings.HasPrefix(s.State, "Up to date: the figures include every answer") || s.Newer != 0 {
		t.Fatalf("after the recompute: %+v", s)
	}
	answerSome(t, a.store, p1, 3)
	if s := dashStatus(t, a, admin, "fresh"); !strings.HasPrefix(s.State, "3 answers are newer than the last recompute") || s.Newer != 3 {
		t.Fatalf("after 3 more answers: %+v", s)
	}
	answerSome(t, a.store, p1, 1)
	page := a.do(admin, "GET", "/admin/studies/fresh/dashboard", nil, nil)
	if !strings.Contains(page.body, "4 answers are newer than the last recompute") || strings.Contains(page.body, "Up to date") {
		t.Fatalf("the dashboard page does not say 4 answers are newer:\n%s", page.body)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if s := dashStatus(t, a, admin, "fresh"); !strings.HasPrefix(s.State, "Up to date") || s.Newer != 0 {
		t.Fatalf("after recomputing again: %+v", s)
	}
}

// A study with a held-out share: the run reads the held-out answers and
// leaves them out of its fits on purpose (counted apart in its settings),
// so right after a recompute the dashboard says "up to date", and after
// more answers it counts them all, held-out ones included.
func TestDashboardUpToDateWithHeldout(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "held", Title: "Held", QuestionsPerParticipant: 40,
		Status: study.StatusOpen, HeldoutShare: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:8]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	var ps []study.Participant
	for range 3 {
		p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		answerSome(t, a.store, p, 15)
		ps = append(ps, p)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	run, err := a.store.LatestRun(ctx, st.ID)
	if err != nil || run == nil || run.Status != study.RunDone {
		t.Fatalf("latest run %+v, %v", run, err)
	}
	var set recompute.Settings
	if err := json.Unmarshal(run.Settings, &set); err != nil || set.Heldout == 0 || run.Answers+set.Heldout != 45 {
		t.Fatalf("the run fit %d answers and held out %d (%v); want some of the 45 held out", run.Answers, set.Heldout, err)
	}
	if s := dashStatus(t, a, admin, "held"); !strings.HasPrefix(s.State, "Up to date: the figures include every answer") || s.Newer != 0 {
		t.Fatalf("after the recompute (%d held-out answers): %+v", set.Heldout, s)
	}
	page := a.do(admin, "GET", "/admin/studies/held/dashboard", nil, nil)
	if !strings.Contains(page.body, "Up to date: the figures include every answer") {
		t.Fatalf("the dashboard page does not say up to date:\n%s", page.body)
	}
	answerSome(t, a.store, ps[0], 5)
	if s := dashStatus(t, a, admin, "held"); !strings.HasPrefix(s.State, "5 answers are newer than the last recompute") || s.Newer != 5 {
		t.Fatalf("after 5 more answers: %+v", s)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if s := dashStatus(t, a, admin, "held"); !strings.HasPrefix(s.State, "Up to date") || s.Newer != 0 {
		t.Fatalf("after recomputing again: %+v", s)
	}
}

// Excluding a participant after a recompute, or including them again,
// leaves figures computed with the earlier exclusions: the dashboard says
// so (and still counts newer answers) until the next recompute. Undoing a
// change before it makes the figures current again. A run stored before
// runs kept their excluded participants says nothing about exclusions.
func TestDashboardSaysExclusionsChanged(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("excl", 8, 50, "open")
	admin := a.admin()
	ctx := context.Background()
	var ps []study.Participant
	for range 3 {
		p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		answerSome(t, a.store, p, 6)
		ps = append(ps, p)
	}
	exclude := func(p study.Participant, excluded bool) {
		t.Helper()
		v := "0"
		if excluded {
			v = "1"
		}
		if r := a.do(admin, "POST", "/admin/studies/excl/participants/"+p.PublicID+"/exclude", url.Values{"excluded": {v}}, nil); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("exclude %s=%s: %d %s", p.PublicID, v, r.StatusCode, r.body)
		}
	}
	recomputeNow := func() {
		t.Helper()
		if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
	upToDate := func(when string) {
		t.Helper()
		if s := dashStatus(t, a, admin, "excl"); !strings.HasPrefix(s.State, "Up to date: the figures include every answer") || s.Newer != 0 || s.ExclusionsChanged {
			t.Fatalf("%s: %+v; want up to date", when, s)
		}
	}
	const changed = "The exclusions changed since the last recompute"
	exclusionsChanged := func(when string, newer int) {
		t.Helper()
		s := dashStatus(t, a, admin, "excl")
		if !strings.HasPrefix(s.State, changed) || !strings.Contains(s.State, "the figures below use the earlier exclusions") ||
			!s.ExclusionsChanged || s.Newer != newer || strings.Contains(s.State, "Up to date") {
			t.Fatalf("%s: %+v; want the exclusions changed and %d newer", when, s, newer)
		}
		if newer > 0 && !strings.Contains(s.State, answersAre(newer)+" newer as well") {
			t.Fatalf("%s: %q does not say %d answers are newer", when, s.State, newer)
		}
		page := a.do(admin, "GET", "/admin/studies/excl/dashboard", nil, nil)
		if !strings.Contains(page.body, changed) || strings.Contains(page.body, "Up to date") {
			t.Fatalf("%s: the dashboard page does not say the exclusions changed:\n%s", when, page.body)
		}
	}

	recomputeNow()
	upToDate("after the first recompute")
	exclude(ps[1], true)
	exclusionsChanged("after excluding a participant", 0)
	answerSome(t, a.store, ps[0], 2)
	exclusionsChanged("after excluding a participant and 2 more answers", 2)
	recomputeNow()
	upToDate("after recomputing with the participant excluded")
	exclude(ps[1], false)
	exclusionsChanged("after including them again", 0)
	exclude(ps[1], true)
	upToDate("after excluding them again (the exclusions of the last recompute)")
	exclude(ps[1], false)
	recomputeNow()
	upToDate("after recomputing with them included")
	// Swap one excluded participant for another: same count.
	exclude(ps[0], true)
	recomputeNow()
	upToDate("after recomputing with the first participant excluded")
	exclude(ps[0], false)
	exclude(ps[2], true)
	exclusionsChanged("after swapping the excluded participant", 0)

	// A run from before runs kept their excluded participants: unknown, so
	// only the answers count.
	recomputeNow()
	if _, err := a.pool.Exec(ctx, `UPDATE recompute_runs SET settings = settings - 'excluded_participants' WHERE study_id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	exclude(ps[2], false)
	upToDate("after including a participant again after an old run")
	answerSome(t, a.store, ps[0], 1)
	if s := dashStatus(t, a, admin, "excl"); !strings.HasPrefix(s.State, "1 answer is newer than the last recompute") || s.Newer != 1 || s.ExclusionsChanged {
		t.Fatalf("an old run and 1 more answer: %+v", s)
	}
}

// answersAre is "1 answer is" or "n answers are".
func answersAre(n int) string {
	if n == 1 {
		return "1 answer is"
	}
	return strconv.Itoa(n) + " answers are"
}
