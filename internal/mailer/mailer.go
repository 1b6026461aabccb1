// Package mailer sends the server's e-mails (today: a study's invitations,
// issue 30) through the SMTP server the configuration names, with
// github.com/wneessen/go-mail. Without a configuration nothing is sent and
// the pages show the links to pass on by hand.
package mailer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"
)

// TLS is how the connection to the SMTP server is encrypted.
type TLS string

const (
	// STARTTLS: a plain connection upgraded with STARTTLS, refused when
	// the server does not offer it (port 587 by default).
	STARTTLS TLS = "starttls"
	// Implicit: TLS from the first byte, "SMTPS" (port 465 by default).
	Implicit TLS = "tls"
	// None: no encryption, for a relay on the same host or network only
	// (port 25 by default); credentials are then refused.
	None TLS = "none"
)

// Bounds of what is sent.
const (
	// MaxAddressLen is the longest address accepted (RFC 5321's path).
	MaxAddressLen = 254
	maxSubjectLen = 200
	maxBodyLen    = 64 << 10
	// DefaultTimeout bounds one message's whole exchange with the server,
	// well inside a request's deadline.
	DefaultTimeout = 10 * time.Second
)

// Config is the SMTP server mail goes through.
type Config struct {
	Host     string
	Port     int // 0: the TLS mode's usual port
	Username string
	Password string
	// From is the sender's address, e.g. "closer <closer@lab.example>".
	From    string
	TLS     TLS
	Timeout time.Duration // 0: DefaultTimeout
	// RootCAs, when set, are the only authorities trusted for the
	// server's certificate (a private relay's own CA; tests); nil: the
	// system's.
	RootCAs *x509.CertPool
}

// Check validates c; the error names every problem found, by setting.
func (c Config) Check() error {
	var errs []error
	if strings.TrimSpace(c.Host) == "" || strings.ContainsAny(c.Host, " /\r\n") {
		errs = append(errs, fmt.Errorf("SMTP_HOST %q must be a host name or address", c.Host))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("SMTP_PORT %d must be from 1 to 65535", c.Port))
	}
	switch c.TLS {
	case STARTTLS, Implicit:
	case None:
		if c.Username != "" || c.Password != "" {
			errs = append(errs, errors.New("SMTP_TLS=none sends in clear text: SMTP_USERNAME and SMTP_PASSWORD need starttls or tls"))
		}
	default:
		errs = append(errs, fmt.Errorf("SMTP_TLS %q must be starttls, tls or none", c.TLS))
	}
	if (c.Username == "") != (c.Password == "") {
		errs = append(errs, errors.New("set both SMTP_USERNAME and SMTP_PASSWORD, or neither"))
	}
	if _, err := address(c.From); err != nil {
		errs = append(errs, fmt.Errorf("SMTP_FROM: %w", err))
	}
	if c.Timeout < 0 || c.Timeout > time.Minute {
		errs = append(errs, fmt.Errorf("the SMTP timeout %s must be up to 1m", c.Timeout))
	}
	return errors.Join(errs...)
}

// address parses one e-mail address (with an optional display name),
// bounded in length.
func address(s string) (*mail.Address, error) {
	if len(s) > MaxAddressLen+200 {
		return nil, fmt.Errorf("%.40q… is too long", s)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an e-mail address", s)
	}
	if len(a.Address) > MaxAddressLen {
		return nil, fmt.Errorf("%.40q… is longer than %d characters", a.Address, MaxAddressLen)
	}
	return a, nil
}

// Mailer sends plain-text messages through one SMTP server, one connection
// a message (invitations are rare; nothing is kept open).
type Mailer struct {
	cfg  Config
	from string
}

// New checks cfg and returns its mailer.
func New(cfg Config) (*Mailer, error) {
	if cfg.TLS == "" {
		cfg.TLS = STARTTLS
	}
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("mailer.New: %w", err)
	}
	if cfg.Port == 0 {
		cfg.Port = map[TLS]int{STARTTLS: 587, Implicit: 465, None: 25}[cfg.TLS]
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	from, _ := address(cfg.From)
	return &Mailer{cfg: cfg, from: from.String()}, nil
}

// Server names the server for messages to the researcher ("smtp.lab.example:587").
func (m *Mailer) Server() string { return fmt.Sprintf("%s:%d", m.cfg.Host, m.cfg.Port) }

// Send sends one plain-text message to one address. It returns once the
// server accepted the message, or with the reason it did not (bounded by
// the configured timeout and ctx).
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	rcpt, err := address(to)
	if err != nil {
		return fmt.Errorf("mailer.Send: %w", err)
	}
	if len(body) > maxBodyLen {
		return fmt.Errorf("mailer.Send(%s): a body of %d bytes is over %d", rcpt.Address, len(body), maxBodyLen)
	}
	msg := gomail.NewMsg()
	if err := msg.From(m.from); err != nil {
		return fmt.Errorf("mailer.Send(%s): from: %w", rcpt.Address, err)
	}
	if err := msg.To(rcpt.Address); err != nil {
		return fmt.Errorf("mailer.Send(%s): to: %w", rcpt.Address, err)
	}
	msg.Subject(oneLine(subject, maxSubjectLen))
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, body)

	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	c, err := m.client()
	if err != nil {
		return fmt.Errorf("mailer.Send(%s): %w", rcpt.Address, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mailer.Send(%s) via %s: %w", rcpt.Address, m.Server(), err)
	}
	return nil
}

// client is a go-mail client for one message.
func (m *Mailer) client() (*gomail.Client, error) {
	tc := &tls.Config{ServerName: m.cfg.Host, MinVersion: tls.VersionTLS12, RootCAs: m.cfg.RootCAs}
	opts := []gomail.Option{gomail.WithPort(m.cfg.Port), gomail.WithTimeout(m.cfg.Timeout), gomail.WithTLSConfig(tc)}
	switch m.cfg.TLS {
	case Implicit:
		opts = append(opts, gomail.WithSSL())
	case STARTTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case None:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if m.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(m.cfg.Username), gomail.WithPassword(m.cfg.Password))
	}
	return gomail.NewClient(m.cfg.Host, opts...)
}

// oneLine is s with control characters (line breaks) as spaces, cut to at
// most n bytes on a character boundary: a header never spans lines of the
// caller's making.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
