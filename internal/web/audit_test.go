package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The audit trail records who changed what, when and from where (a
// study's status, roles, tokens, deletion), identifying exports, logins
// and failed logins; the study's history page shows the study's entries;
// only a site administrator exports the log, formula-neutralised; and
// nobody, not even the database's owner, changes or deletes a line.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	ctx := context.Background()
	by := map[string]principal{}
	for _, p := range f.principals {
		by[p.name] = p
	}
	owner, viewer := by["owner"].client, by["viewer"].client
	slug := f.studyA.Slug
	steps := []struct {
		c      *http.Client
		method string
		path   string
		form   url.Values
	}{
		{owner, "POST", "/admin/studies/" + slug + "/status", url.Values{"status": {"paused"}}},
		{owner, "POST", "/admin/studies/" + slug + "/people", url.Values{"email": {"editor@lab.example"}, "role": {"viewer"}}},
		{owner, "POST", "/admin/account/tokens", url.Values{"name": {"audited"}}},
		{owner, "GET", "/admin/studies/" + slug + "/participants.csv", nil},
		{viewer, "GET", "/admin/studies/" + slug + "/triplets.csv", nil},                         // no identifying data: not recorded
		{viewer, "POST", "/admin/studies/" + slug + "/status", url.Values{"status": {"closed"}}}, // refused: not recorded
	}
	for _, s := range steps {
		if res := f.do(s.c, s.method, s.path, s.form, nil); res.StatusCode >= 500 {
			t.Fatalf("%s %s: %d", s.method, s.path, res.StatusCode)
		}
	}
	if res := f.login(f.client(), "=1+1@evil.example", "wrong-password", nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("failed login: %d", res.StatusCode)
	}
	res := f.do(by["site administrator"].client, "GET", "/admin/audit.csv", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("audit.csv: %d", res.StatusCode)
	}
	rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows[1:] {
		lines = append(lines, strings.Join([]string{r[3], r[4], r[6], r[7], r[8]}, " | "))
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"owner@lab.example | 127.0.0.1 | " + slug + " | POST /admin/studies/{slug}/status | status=paused",
		"owner@lab.example | 127.0.0.1 | " + slug + " | POST /admin/studies/{slug}/people | email=editor@lab.example; role=viewer",
		"owner@lab.example | 127.0.0.1 |  | POST /admin/account/tokens | name=audited",
		"owner@lab.example | 127.0.0.1 | " + slug + " | GET /admin/studies/{slug}/participants.csv | ",
		"owner@lab.example | 127.0.0.1 |  | login | with a password",
		"'=1+1@evil.example | 127.0.0.1 |  | failed login | ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "viewer@lab.example | 127.0.0.1 | "+slug+" | GET") || strings.Contains(all, "status=closed") {
		t.Errorf("a viewer's plain export or a refused change was recorded:\n%s", all)
	}
	if strings.Contains(res.body, "\n=1+1") || strings.Contains(res.body, ",=1+1") {
		t.Error("a formula reached audit.csv unneutralised")
	}
	// The study's history, for its people only; addresses for owners.
	hist := "/admin/studies/" + slug + "/history"
	if res := f.do(owner, "GET", hist, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, "status=paused") || !strings.Contains(res.body, "127.0.0.1") {
		t.Errorf("the owner's history page: %d", res.StatusCode)
	}
	if res := f.do(viewer, "GET", hist, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, "status=paused") || strings.Contains(res.body, "127.0.0.1") {
		t.Errorf("the viewer's history page: %d", res.StatusCode)
	}
	if res := f.do(by["owner of another study"].client, "GET", hist, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("another lab's history: %d, want 404", res.StatusCode)
	}
	if res := f.do(owner, "GET", "/admin/audit.csv", nil, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a researcher's audit.csv: %d, want 403", res.StatusCode)
	}
	// Append-only for everyone.
	for _, q := range []string{`UPDATE audit_log SET detail = ''`, `DELETE FROM audit_log`, `TRUNCATE audit_log`} {
		if _, err := f.pool.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused", q, err)
		}
	}
}
