package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// A participant's deletion at their request: previewed with what goes,
// refused without the confirmation, then done in this study or in every
// study the account may change (never another lab's); their answers leave
// the votes, and the audit trail records the deletion without the id.
func TestEraseParticipant(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	ctx := context.Background()
	by := map[string]principal{}
	for _, p := range f.principals {
		by[p.name] = p
	}
	owner, err := f.accounts.AdminByEmail(ctx, "owner@lab.example")
	if err != nil {
		t.Fatal(err)
	}
	other := f.study("lab-a-other", 3, 3, "open")
	if err := f.accounts.GrantRole(ctx, other.ID, owner.ID, study.RoleOwner, owner.ID); err != nil {
		t.Fatal(err)
	}
	labB, err := f.store.StudyBySlug(ctx, "lab-b-study")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []int64{other.ID, labB.ID} {
		if _, _, err := f.store.CreateParticipant(ctx, st, "worker-1", nil); err != nil {
			t.Fatal(err)
		}
	}
	count := func(st int64) int {
		return f.count(`SELECT count(*) FROM participants WHERE study_id = $1 AND external_id = 'worker-1'`, st)
	}
	votes := func() int {
		return f.count(`SELECT coalesce(sum(j_closer + k_closer), 0)::int FROM votes WHERE study_id = $1`, f.studyA.ID)
	}
	if votes() != 1 {
		t.Fatalf("votes before: %d, want the answer's 1", votes())
	}
	path := "/admin/studies/" + f.studyA.Slug + "/participants/erase"
	if res := f.do(by["editor"].client, "GET", path, nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the form: %d", res.StatusCode)
	}
	res := f.do(by["editor"].client, "POST", path, url.Values{"id": {"worker-1"}, "scope": {"study"}, "action": {"preview"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, "1 participant(s), 2 question(s) issued, 1 answer(s) (1 counted in the votes") {
		t.Fatalf("preview: %d %s", res.StatusCode, res.body)
	}
	res = f.do(by["editor"].client, "POST", path, url.Values{"id": {"worker-1"}, "scope": {"study"}, "action": {"erase"}}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || count(f.studyA.ID) != 1 {
		t.Fatalf("erase without the confirmation: %d, %d left", res.StatusCode, count(f.studyA.ID))
	}
	// The owner deletes from every study they may change: lab A's two, not lab B's.
	res = f.do(by["owner"].client, "POST", path, url.Values{"id": {"worker-1"}, "scope": {"all"}, "action": {"erase"}, "confirm": {"yes"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="erased"`) {
		t.Fatalf("erase: %d %s", res.StatusCode, res.body)
	}
	if count(f.studyA.ID) != 0 || count(other.ID) != 0 || count(labB.ID) != 1 {
		t.Fatalf("left with worker-1: lab A %d and %d, lab B %d; want 0, 0, 1", count(f.studyA.ID), count(other.ID), count(labB.ID))
	}
	if votes() != 0 {
		t.Errorf("votes after: %d, want 0", votes())
	}
	if n := f.count(`SELECT count(*) FROM audit_log WHERE detail LIKE '%worker-1%' OR action LIKE '%worker-1%'`); n != 0 {
		t.Error("the audit trail holds the deleted participant's id")
	}
	if n := f.count(`SELECT count(*) FROM audit_log WHERE detail LIKE 'deleted a participant''s data%' AND detail LIKE '%lab-a-other: 1 participant(s)%'`); n != 1 {
		t.Error("the audit trail does not record the deletion")
	}
	// A viewer may not delete.
	if res := f.do(by["viewer"].client, "POST", path, url.Values{"id": {"x"}, "action": {"preview"}}, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's deletion: %d, want 403", res.StatusCode)
	}
}

// Through the API: a dry run says what would go and deletes nothing; the
// deletion enqueues the recompute of the study that lost answers.
func TestAPIEraseParticipant(t *testing.T) {
	t.Parallel()
	a, jobs := newAppWithJobs(t)
	ctx := context.Background()
	st := a.study("s", 4, 3, "open")
	p, _, err := a.store.CreateParticipant(ctx, st.ID, "PROLIFIC-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := a.store.Next(ctx, p.ID)
	if err != nil || pr.Question == nil {
		t.Fatal(pr, err)
	}
	if _, err := a.store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	adm, err := a.accounts.CreateResearcher(ctx, "lab@example.org", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.accounts.GrantRole(ctx, st.ID, adm.ID, study.RoleEditor, adm.ID); err != nil {
		t.Fatal(err)
	}
	writer, _, err := a.accounts.CreateScopedAPIToken(ctx, adm.ID, "w", study.TokenScope{AllStudies: true, Write: true})
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := a.accounts.CreateScopedAPIToken(ctx, adm.ID, "r", study.TokenScope{AllStudies: true, Read: true})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/studies/s/participants/erase"
	if res := a.api("POST", path, reader, `{"id": "PROLIFIC-1"}`, nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a reading token: %d, want 403", res.StatusCode)
	}
	var out struct {
		Erased  bool `json:"erased"`
		Studies []struct {
			Slug    string `json:"slug"`
			Answers int    `json:"answers"`
		} `json:"studies"`
	}
	if res := a.api("POST", path, writer, `{"id": "PROLIFIC-1", "dry_run": true}`, &out); res.StatusCode != http.StatusOK || out.Erased || len(out.Studies) != 1 || out.Studies[0].Answers != 1 {
		t.Fatalf("dry run: %d %s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE external_id = 'PROLIFIC-1'`); n != 1 {
		t.Fatal("the dry run deleted")
	}
	if state, _, err := jobs.Pending(ctx, st.ID); err != nil || state != "" {
		t.Fatalf("a recompute before the deletion: %q %v", state, err)
	}
	res := a.api("POST", path, writer, `{"id": "`+p.PublicID+`"}`, &out)
	if res.StatusCode != http.StatusOK || !out.Erased || len(out.Studies) != 1 {
		t.Fatalf("erase: %d %s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 0 {
		t.Fatalf("%d participants left", n)
	}
	if state, _, err := jobs.Pending(ctx, st.ID); err != nil || state == "" {
		t.Fatalf("no recompute enqueued after the deletion: %q %v", state, err)
	}
}

// An editor sets the study's retention of identifying fields on the
// data-rights page; a viewer may not; a bad number is refused.
func TestRetentionSetting(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	by := map[string]principal{}
	for _, p := range f.principals {
		by[p.name] = p
	}
	path := "/admin/studies/" + f.studyA.Slug + "/retention"
	if res := f.do(by["viewer"].client, "POST", path, url.Values{"retention_days": {"30"}}, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's retention: %d, want 403", res.StatusCode)
	}
	if res := f.do(by["editor"].client, "POST", path, url.Values{"retention_days": {"0"}}, nil); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("0 days: %d, want 422", res.StatusCode)
	}
	if res := f.do(by["editor"].client, "POST", path, url.Values{"retention_days": {"30"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("30 days: %d", res.StatusCode)
	}
	res := f.do(by["editor"].client, "GET", "/admin/studies/"+f.studyA.Slug+"/participants/erase?msg=saved", nil, nil)
	if !strings.Contains(res.body, "blanked 30 days after the study closes") || !strings.Contains(res.body, `value="30"`) {
		t.Errorf("the page after saving: %s", res.body)
	}
	if res := f.do(by["editor"].client, "POST", path, url.Values{"retention_days": {""}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("keep: %d", res.StatusCode)
	}
	if n := f.count(`SELECT count(*) FROM studies WHERE id = $1 AND retention_days IS NULL`, f.studyA.ID); n != 1 {
		t.Error("an empty retention did not keep the fields")
	}
}
