package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAddAdmin: an admin adds a colleague from the account page, who can
// then log in and sees the studies; a taken e-mail, a bad address and a
// short password are refused with the reason, storing nothing.
func TestAddAdmin(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("shared", 3, 3, "open")
	c := a.admin()
	res := a.do(c, "POST", "/admin/account/admins", url.Values{"email": {" Colleague@Example.org "}, "password": {"colleague-pw"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="added-admin">colleague@example.org can now log in.`) {
		t.Fatalf("add admin: %d %s", res.StatusCode, res.body)
	}
	if !strings.Contains(res.body, "<td>r@example.org</td>") || !strings.Contains(res.body, "<td>colleague@example.org</td>") {
		t.Error("the account page does not list both admins")
	}
	colleague := a.client()
	if res := a.do(colleague, "POST", "/admin/login", url.Values{"email": {"colleague@example.org"}, "password": {"colleague-pw"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the new admin's login: %d", res.StatusCode)
	}
	if res := a.do(colleague, "GET", "/admin/studies/shared", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the new admin's study page: %d", res.StatusCode)
	}
	for _, c2 := range []struct { //nolint:paralleltest // subtests share one app's admins
		name, email, password, reason string
	}{
		{"taken", "R@example.org", "another-password", "an admin with e-mail r@example.org exists"},
		{"not an address", "colleague", "another-password", "is not an e-mail address"},
		{"short password", "third@example.org", "short", "at least 8 characters"},
		{"long password", "third@example.org", strings.Repeat("p", 73), "at most 72 bytes"},
	} {
		t.Run(c2.name, func(t *testing.T) {
			res := a.do(c, "POST", "/admin/account/admins", url.Values{"email": {c2.email}, "password": {c2.password}}, nil)
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, c2.reason) {
				t.Errorf("%d, want 422 saying %q", res.StatusCode, c2.reason)
			}
			if !strings.Contains(res.body, `value="`+c2.email+`"`) {
				t.Error("the refused e-mail is not kept in the form")
			}
		})
	}
	admins, err := a.accounts.ListAdmins(context.Background())
	if err != nil || len(admins) != 2 {
		t.Fatalf("admins after the refusals: %+v, %v; want the two added", admins, err)
	}
}
