package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/mailer"
)

// smtpFromEnv reads the SMTP server invitations are e-mailed through
// (issue 30): SMTP_HOST, SMTP_PORT (default by SMTP_TLS: 587, 465 or 25),
// SMTP_USERNAME and SMTP_PASSWORD (both or neither), SMTP_FROM (the
// sender, "closer <closer@lab.example>") and SMTP_TLS (starttls, the
// default, required of the server; tls, implicit from the first byte; or
// none, for a relay on the same host, without credentials). Without
// SMTP_HOST nothing is mailed and the people page shows the links to pass
// on.
func smtpFromEnv(getenv func(string) string) (*mailer.Config, []error) {
	host := strings.TrimSpace(getenv("SMTP_HOST"))
	if host == "" {
		var errs []error
		for _, k := range []string{"SMTP_PORT", "SMTP_USERNAME", "SMTP_PASSWORD", "SMTP_FROM", "SMTP_TLS"} {
			if strings.TrimSpace(getenv(k)) != "" {
				errs = append(errs, fmt.Errorf("%s is set without SMTP_HOST", k))
			}
		}
		return nil, errs
	}
	c := &mailer.Config{Host: host, Username: strings.TrimSpace(getenv("SMTP_USERNAME")), Password: getenv("SMTP_PASSWORD"),
		From: strings.TrimSpace(getenv("SMTP_FROM")), TLS: mailer.TLS(strings.ToLower(strings.TrimSpace(getenv("SMTP_TLS"))))}
	if c.TLS == "" {
		c.TLS = mailer.STARTTLS
	}
	var errs []error
	if v := strings.TrimSpace(getenv("SMTP_PORT")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			errs = append(errs, fmt.Errorf("SMTP_PORT %q must be a port number from 1 to 65535", v))
		} else {
			c.Port = n
		}
	}
	if c.From == "" {
		errs = append(errs, fmt.Errorf("SMTP_HOST needs SMTP_FROM, the sender's address (e.g. closer <closer@lab.example>)"))
	} else if err := c.Check(); err != nil {
		errs = append(errs, err)
	}
	return c, errs
}
