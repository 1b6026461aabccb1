package mailer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/mailer"
	"github.com/closer-lab/closer/internal/mailer/mailertest"
)

// A message goes through a real SMTP server: to its recipient, from the
// configured sender, with its subject on one line and its body as written;
// over STARTTLS with credentials too.
func TestSendThroughSMTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    mailertest.Options
		tls  mailer.TLS
	}{
		{"plain relay", mailertest.Options{}, mailer.None},
		{"starttls with credentials", mailertest.Options{STARTTLS: true, Username: "closer", Password: "s3cret-pass"}, mailer.STARTTLS},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := mailertest.Start(t, c.o)
			m, err := mailer.New(mailer.Config{Host: srv.Host, Port: srv.Port, From: "closer <closer@lab.example>", TLS: c.tls,
				Username: c.o.Username, Password: c.o.Password, RootCAs: srv.RootCAs})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Send(context.Background(), "Ada@Example.org", "Join\r\nBcc: evil@example.org", "line one\nhttps://closer.example/invite/abc\n"); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			got := msgs[0]
			if got.From != "closer@lab.example" || len(got.To) != 1 || got.To[0] != "Ada@Example.org" {
				t.Fatalf("envelope from %q to %v", got.From, got.To)
			}
			if !strings.Contains(got.Data, "https://closer.example/invite/abc") || !strings.Contains(got.Data, "text/plain") {
				t.Fatalf("the message lacks its body:\n%s", got.Data)
			}
			if strings.Contains(got.Data, "\r\nBcc:") || !strings.Contains(got.Data, "Subject: Join  Bcc: evil@example.org") {
				t.Fatalf("the subject's line break made a header:\n%s", got.Data)
			}
		})
	}
}

// Failures come back with the server's reason, nothing is accepted, and
// mandatory STARTTLS never falls back to clear text; bad settings and
// addresses are refused before any connection.
func TestSendFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reject := mailertest.Start(t, mailertest.Options{RejectRcpt: "no such mailbox here"})
	m, err := mailer.New(mailer.Config{Host: reject.Host, Port: reject.Port, From: "closer@lab.example", TLS: mailer.None})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(ctx, "ada@example.org", "s", "b"); err == nil || !strings.Contains(err.Error(), "no such mailbox here") {
		t.Fatalf("a refused recipient: %v, want the server's reason", err)
	}
	plain := mailertest.Start(t, mailertest.Options{})
	m, err = mailer.New(mailer.Config{Host: plain.Host, Port: plain.Port, From: "closer@lab.example", TLS: mailer.STARTTLS})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(ctx, "ada@example.org", "s", "b"); err == nil || len(plain.Messages()) != 0 {
		t.Fatalf("STARTTLS required from a server without it: %v, %d accepted", err, len(plain.Messages()))
	}
	if err := m.Send(ctx, "not an address", "s", "b"); err == nil || !strings.Contains(err.Error(), "not an e-mail address") {
		t.Fatalf("a bad recipient: %v", err)
	}
	if err := m.Send(ctx, strings.Repeat("a", 250)+"@example.org", "s", "b"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("a long recipient: %v", err)
	}
	for _, c := range []struct {
		cfg  mailer.Config
		want string
	}{
		{mailer.Config{From: "closer@lab.example"}, "SMTP_HOST"},
		{mailer.Config{Host: "smtp.lab.example", From: "nope"}, "SMTP_FROM"},
		{mailer.Config{Host: "smtp.lab.example", From: "closer@lab.example", TLS: "ssl3"}, "SMTP_TLS"},
		{mailer.Config{Host: "smtp.lab.example", From: "closer@lab.example", TLS: mailer.None, Username: "u", Password: "p"}, "clear text"},
		{mailer.Config{Host: "smtp.lab.example", From: "closer@lab.example", Username: "u"}, "both SMTP_USERNAME"},
		{mailer.Config{Host: "smtp.lab.example", From: "closer@lab.example", Port: 70000}, "SMTP_PORT"},
	} {
		if _, err := mailer.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}
