package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/mailer"
)

// The SMTP settings: read from the environment, checked at start, each
// mistake named by its variable.
func TestConfigSMTP(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	c, errs := smtpFromEnv(env(map[string]string{"SMTP_HOST": "smtp.uni.example", "SMTP_PORT": "2525", "SMTP_USERNAME": "closer",
		"SMTP_PASSWORD": "s3cret", "SMTP_FROM": "closer <closer@uni.example>", "SMTP_TLS": "TLS"}))
	if len(errs) != 0 || c == nil || c.Host != "smtp.uni.example" || c.Port != 2525 || c.TLS != mailer.Implicit || c.Username != "closer" {
		t.Fatalf("a full setting: %+v, %v", c, errs)
	}
	if c, errs := smtpFromEnv(env(map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "closer@uni.example"})); len(errs) != 0 || c.TLS != mailer.STARTTLS {
		t.Fatalf("the default TLS: %+v, %v", c, errs)
	}
	if c, errs := smtpFromEnv(env(nil)); c != nil || len(errs) != 0 {
		t.Fatalf("no setting: %+v, %v", c, errs)
	}
	for name, c := range map[string]struct {
		kv   map[string]string
		want string
	}{
		"from without host":     {map[string]string{"SMTP_FROM": "closer@uni.example"}, "SMTP_FROM is set without SMTP_HOST"},
		"host without from":     {map[string]string{"SMTP_HOST": "relay"}, "needs SMTP_FROM"},
		"from not an address":   {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "closer"}, "SMTP_FROM"},
		"port not a number":     {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "a@b.example", "SMTP_PORT": "smtp"}, "SMTP_PORT"},
		"port too large":        {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "a@b.example", "SMTP_PORT": "70000"}, "SMTP_PORT"},
		"unknown tls":           {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "a@b.example", "SMTP_TLS": "ssl"}, "SMTP_TLS"},
		"password in the clear": {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "a@b.example", "SMTP_TLS": "none", "SMTP_USERNAME": "u", "SMTP_PASSWORD": "p"}, "clear text"},
		"user without password": {map[string]string{"SMTP_HOST": "relay", "SMTP_FROM": "a@b.example", "SMTP_USERNAME": "u"}, "SMTP_PASSWORD"},
	} {
		_, errs := smtpFromEnv(env(c.kv))
		if !strings.Contains(fmt.Sprint(errs), c.want) {
			t.Errorf("%s: %v, want %q", name, errs, c.want)
		}
	}
	// loadConfig reports them with the rest.
	_, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://localhost/closer", "SMTP_HOST": "relay"}))
	if err == nil || !strings.Contains(err.Error(), "SMTP_FROM") {
		t.Fatalf("loadConfig: %v", err)
	}
}
