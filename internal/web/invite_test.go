package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// An owner invites a collaborator without an account: the link (shown
// once, stored hashed) sets a password once, before it expires, and the
// new account holds the role it was invited to and no more. An e-mail with
// an account gets the role at once.
func TestInviteCollaborator(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	ctx := context.Background()
	var owner principal
	for _, p := range f.principals {
		if p.name == "owner" {
			owner = p
		}
	}
	people := "/admin/studies/" + f.studyA.Slug + "/people"
	res := f.do(owner.client, "POST", people, url.Values{"email": {"New@Lab.example"}, "role": {"editor"}}, nil)
	m := regexp.MustCompile(`id="invite-link">[^<]*(/invite/[^<]+)<`).FindStringSubmatch(res.body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("invite: %d %s", res.StatusCode, res.body)
	}
	link := m[1]
	token := strings.TrimPrefix(link, "/invite/")
	if n := f.count(`SELECT count(*) FROM invitations WHERE token_hash = convert_to($1, 'UTF8') OR email = $1`, token); n != 0 {
		t.Fatal("the invitation's secret is stored as is")
	}
	if !strings.Contains(f.do(owner.client, "GET", people, nil, nil).body, "<td>new@lab.example</td><td>editor</td>") {
		t.Error("the people page does not list the pending invitation")
	}
	anon := f.client()
	if res := f.do(anon, "GET", link, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, "new@lab.example") {
		t.Fatalf("the invitation page: %d", res.StatusCode)
	}
	if res := f.do(anon, "POST", link, url.Values{"password": {"short"}}, nil); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "at least 8") {
		t.Fatalf("a short password: %d", res.StatusCode)
	}
	if res := f.do(anon, "POST", link, url.Values{"password": {"invited-password"}}, nil); res.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(res.Header.Get("Location"), "/admin/login") {
		t.Fatalf("accept: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Single use.
	for _, method := range []string{"GET", "POST"} {
		if res := f.do(f.client(), method, link, url.Values{"password": {"another-password"}}, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s the used link: %d, want 404", method, res.StatusCode)
		}
	}
	// The new account is an editor of lab A's study and sees nothing else.
	c := f.client()
	if res := f.login(c, "new@lab.example", "invited-password", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the invited account's login: %d", res.StatusCode)
	}
	for path, want := range map[string]int{
		"/admin/studies/" + f.studyA.Slug + "/edit": http.StatusOK,
		"/admin/studies/lab-b-study":                http.StatusNotFound,
	} {
		if res := f.do(c, "GET", path, nil, nil); res.StatusCode != want {
			t.Errorf("GET %s as the invited editor: %d, want %d", path, res.StatusCode, want)
		}
	}
	if res := f.do(c, "POST", "/admin/studies/"+f.studyA.Slug+"/delete", url.Values{"confirm": {"yes"}}, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("the invited editor deleting the study: %d, want 403", res.StatusCode)
	}
	// An expired link is refused.
	res = f.do(owner.client, "POST", people, url.Values{"email": {"late@lab.example"}, "role": {"viewer"}}, nil)
	m = regexp.MustCompile(`id="invite-link">[^<]*(/invite/[^<]+)<`).FindStringSubmatch(res.body)
	if m == nil {
		t.Fatal("second invitation", res.StatusCode)
	}
	if _, err := f.pool.Exec(ctx, `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = 'late@lab.example'`); err != nil {
		t.Fatal(err)
	}
	if res := f.do(f.client(), "POST", m[1], url.Values{"password": {"late-password"}}, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("an expired link: %d, want 404", res.StatusCode)
	}
	if n := f.count(`SELECT count(*) FROM admins WHERE email = 'late@lab.example'`); n != 0 {
		t.Error("an expired link made an account")
	}
	// Someone with an account gets the role at once.
	res = f.do(owner.client, "POST", people, url.Values{"email": {"owner-of-another-study@lab.example"}, "role": {"viewer"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="added-person"`) || strings.Contains(res.body, "invite-link") {
		t.Fatalf("a role for an existing account: %d", res.StatusCode)
	}
	// The only owner keeps the role.
	id := f.count(`SELECT id FROM admins WHERE email = 'owner@lab.example'`)
	if res := f.do(owner.client, "POST", people+"/"+strconv.Itoa(id)+"/remove", url.Values{}, nil); res.StatusCode != http.StatusConflict {
		t.Errorf("the only owner removing themselves: %d, want 409", res.StatusCode)
	}
}
