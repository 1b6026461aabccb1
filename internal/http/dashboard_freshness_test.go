package http_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/recompute"
)

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
	answer := func(p collect.Participant, n int) {
		t.Helper()
		for range n {
			pr, err := a.store.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.store.Answer(ctx, p.ID, collect.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Left.Index}); err != nil {
				t.Fatal(err)
			}
		}
	}
	p1, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	answer(p1, 12)
	answer(p2, 5)
	if err := a.store.SetExcluded(ctx, st.ID, p2.PublicID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	status := func() (string, int) {
		t.Helper()
		var out struct {
			State string `json:"state"`
			Newer int    `json:"newer_answers"`
		}
		res := a.do(admin, "GET", "/admin/studies/fresh/dashboard/status", nil, nil)
		if err := json.Unmarshal([]byte(res.body), &out); err != nil {
			t.Fatalf("status: %v\n%s", err, res.body)
		}
		return out.State, out.Newer
	}
	if state, newer := status(); !strings.HasPrefix(state, "Up to date: the figures include every answer") || newer != 0 {
		t.Fatalf("after the recompute: %q, %d newer", state, newer)
	}
	answer(p1, 3)
	if state, newer := status(); !strings.HasPrefix(state, "3 answers are newer than the last recompute") || newer != 3 {
		t.Fatalf("after 3 more answers: %q, %d newer", state, newer)
	}
	answer(p1, 1)
	page := a.do(admin, "GET", "/admin/studies/fresh/dashboard", nil, nil)
	if !strings.Contains(page.body, "4 answers are newer than the last recompute") || strings.Contains(page.body, "Up to date") {
		t.Fatalf("the dashboard page does not say 4 answers are newer:\n%s", page.body)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if state, newer := status(); !strings.HasPrefix(state, "Up to date") || newer != 0 {
		t.Fatalf("after recomputing again: %q, %d newer", state, newer)
	}
}
