package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost:5432/db"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.BaseURL != "http://localhost:8080" || c.LogFormat != "text" || c.LogLevel != slog.LevelInfo || c.RequestLog {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "ADDR": "127.0.0.1:9000",
		"BASE_URL": "https://closer.example.org/", "LOG_FORMAT": "JSON", "LOG_LEVEL": "debug", "REQUEST_LOG": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "https://closer.example.org" || c.LogFormat != "json" || c.LogLevel != slog.LevelDebug || !c.RequestLog {
		t.Fatalf("explicit: %+v", c)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{
		"ADDR": "8080", "BASE_URL": "ftp://x", "ADMIN_EMAIL": "a@b.c", "LOG_FORMAT": "xml", "LOG_LEVEL": "loud", "ADMIN_API_TOKEN": "short",
		"REQUEST_LOG": "loudly",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, want := range []string{"DATABASE_URL is not set", "ADDR", "BASE_URL", "ADMIN_EMAIL and ADMIN_PASSWORD", "LOG_FORMAT", "LOG_LEVEL", "ADMIN_API_TOKEN", "REQUEST_LOG"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

// TRUSTED_PROXIES takes CIDR prefixes and single addresses; anything else is
// named in the error.
func TestConfigTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db"}))
	if err != nil || len(c.TrustedProxies) != 0 {
		t.Fatalf("default: %v %v", c.TrustedProxies, err)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"TRUSTED_PROXIES": "10.1.2.3/8, 192.0.2.7 fd00::/8"}))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(c.TrustedProxies)
	if got != "[10.0.0.0/8 192.0.2.7/32 fd00::/8]" {
		t.Fatalf("trusted proxies: %s", got)
	}
	_, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db",
		"TRUSTED_PROXIES": "10.0.0.0/8,proxy.local,300.1.1.1"}))
	if err == nil || !strings.Contains(err.Error(), `"proxy.local", "300.1.1.1" not a CIDR`) {
		t.Fatalf("bad TRUSTED_PROXIES: %v", err)
	}
}
