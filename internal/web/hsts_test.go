package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/web"
)

// Strict-Transport-Security goes on every response when configured (the
// server terminates TLS) and on none otherwise (a proxy decides).
func TestHSTSOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("h", 3, 2, "open")
	withHSTS := httptest.NewServer(web.New(a.store, a.accounts, web.Config{BaseURL: a.srv.URL, HSTSMaxAge: 48 * time.Hour},
		slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer withHSTS.Close()
	for _, path := range []string{"/healthz", "/s/h", "/admin", "/nope", "/api/v1/studies/h/next"} {
		for _, c := range []struct {
			base, want string
		}{{a.srv.URL, ""}, {withHSTS.URL, "max-age=172800"}} {
			res, err := http.Get(c.base + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if got := res.Header.Get("Strict-Transport-Security"); got != c.want {
				t.Errorf("%s (%d): Strict-Transport-Security %q, want %q", path, res.StatusCode, got, c.want)
			}
		}
	}
}
