package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/mailer"
	"github.com/closer-lab/closer/internal/mailer/mailertest"
	"github.com/closer-lab/closer/internal/web"
)

// mailingApp is an app whose invitations go through the SMTP server srv.
func mailingApp(t *testing.T, srv *mailertest.Server) *app {
	t.Helper()
	m, err := mailer.New(mailer.Config{Host: srv.Host, Port: srv.Port, From: "closer <closer@lab.example>", TLS: mailer.None})
	if err != nil {
		t.Fatal(err)
	}
	return newAppWith(t, web.Config{Mailer: m})
}

// With an SMTP server configured, an invitation is e-mailed to the invited
// address: plain text with the link the page shows, the study, who invited
// and when it expires; the page still shows the link to copy, and the
// audit trail says it was mailed. Giving a role to an existing account
// sends nothing.
func TestInvitationMailed(t *testing.T) {
	t.Parallel()
	srv := mailertest.Start(t, mailertest.Options{})
	a := mailingApp(t, srv)
	a.study("mailed", 3, 3, "draft")
	admin := a.admin()
	res := a.do(admin, "POST", "/admin/studies/mailed/people", url.Values{"email": {"Ada@Uni.example"}, "role": {"viewer"}}, nil)
	m := regexp.MustCompile(`id="invite-link">([^<]+)<`).FindStringSubmatch(res.body)
	if res.StatusCode != http.StatusOK || m == nil || !strings.Contains(res.body, `id="invite-mailed"`) {
		t.Fatalf("invite: %d\n%s", res.StatusCode, res.body)
	}
	link := m[1]
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	got := msgs[0]
	if len(got.To) != 1 || got.To[0] != "ada@uni.example" || got.From != "closer@lab.example" {
		t.Fatalf("envelope from %q to %v", got.From, got.To)
	}
	// The body is quoted-printable; the link has no character it encodes
	// but a line may be soft-broken, so the lines are joined first.
	body := strings.NewReplacer("=\r\n", "", "=\n", "").Replace(got.Data)
	for _, want := range []string{link, `the study "Study mailed" (mailed)`, "r@example.org invites you", "as viewer", "To: <ada@uni.example>", "expires on", "text/plain", "Subject: Invitation to the study"} {
		if !strings.Contains(body, want) {
			t.Errorf("the message lacks %q:\n%s", want, got.Data)
		}
	}
	if n := a.count(`SELECT count(*) FROM audit_log WHERE action = 'POST /admin/studies/{slug}/people' AND detail LIKE '%invitation e-mailed via%'`); n != 1 {
		t.Error("the audit trail does not say the invitation was mailed")
	}
	// The link the mail carries works.
	if res := a.do(a.client(), "GET", strings.TrimPrefix(link, a.srv.URL), nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the mailed link: %d", res.StatusCode)
	}
	// An existing account gets the role; no mail.
	if _, err := a.accounts.CreateResearcher(t.Context(), "bob@uni.example", "bob-password"); err != nil {
		t.Fatal(err)
	}
	if res := a.do(admin, "POST", "/admin/studies/mailed/people", url.Values{"email": {"bob@uni.example"}, "role": {"editor"}}, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, `id="added-person"`) || len(srv.Messages()) != 1 {
		t.Fatalf("an existing account: %d, %d messages", res.StatusCode, len(srv.Messages()))
	}
}

// When the SMTP server refuses the mail (or cannot be reached), the
// invitation still exists and its link is shown; the page says the mail
// was not sent and why, with a 200, never a 500; the audit trail records
// the failure.
func TestInvitationMailFails(t *testing.T) {
	t.Parallel()
	srv := mailertest.Start(t, mailertest.Options{RejectRcpt: "mailbox unavailable at uni"})
	a := mailingApp(t, srv)
	a.study("unmailed", 3, 3, "draft")
	admin := a.admin()
	res := a.do(admin, "POST", "/admin/studies/unmailed/people", url.Values{"email": {"ada@uni.example"}, "role": {"editor"}}, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="invite-mail-error"`) ||
		!strings.Contains(res.body, "mailbox unavailable at uni") || !strings.Contains(res.body, `id="invite-link"`) {
		t.Fatalf("a refused mail: %d\n%s", res.StatusCode, res.body)
	}
	if strings.Contains(res.body, `id="invite-mailed"`) {
		t.Error("the page says the mail is on its way")
	}
	if n := a.count(`SELECT count(*) FROM invitations WHERE email = 'ada@uni.example' AND used_at IS NULL`); n != 1 {
		t.Fatalf("%d invitations after the failed mail, want 1", n)
	}
	if n := a.count(`SELECT count(*) FROM audit_log WHERE detail LIKE '%invitation e-mail not sent%mailbox unavailable at uni%'`); n != 1 {
		t.Error("the audit trail does not record the failed mail")
	}
	if len(srv.Messages()) != 0 {
		t.Error("the refusing server accepted a message")
	}
}
