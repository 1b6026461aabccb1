package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// newAppWithConfig is newApp with cfg (its BaseURL is filled in).
func newAppWithConfig(t *testing.T, cfg web.Config) *app {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}
}

// One client address creates at most JoinBurst participants at once and
// JoinRate a second, through the API and the browser's Start alike; past
// that it gets 429 with Retry-After and nothing is stored, while another
// address (told by a trusted proxy) joins as before. The clock stands
// still, so no join is refilled during the test.
func TestJoinsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := newAppWithConfig(t, web.Config{JoinRate: 0.5, JoinBurst: 3, Now: func() time.Time { return now },
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	a.study("j", 5, 3, "open")
	for i := range 2 {
		if res := a.api("POST", "/api/v1/studies/j/participants", "", "", nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("API join %d: %d %s", i, res.StatusCode, res.body)
		}
	}
	if res := a.do(a.client(), "POST", "/s/j/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("browser join within the burst: %d %s", res.StatusCode, res.body)
	}
	res := a.api("POST", "/api/v1/studies/j/participants", "", `{"external_id": "x"}`, nil)
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("API join past the burst: %d %s; want 429", res.StatusCode, res.body)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 || s > 2 {
		t.Errorf("Retry-After %q, want 2 s (a join every 2 s)", res.Header.Get("Retry-After"))
	}
	res = a.do(a.client(), "POST", "/s/j/start", url.Values{}, nil)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(res.body, "try again in") {
		t.Fatalf("browser join past the burst: %d %s; want 429 with Retry-After", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 3 {
		t.Fatalf("%d participants stored, want 3", n)
	}
	other := map[string]string{"X-Forwarded-For": "192.0.2.7"}
	if res := a.do(a.client(), "POST", "/s/j/start", url.Values{}, other); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("another address: %d %s", res.StatusCode, res.body)
	}
	// Two seconds later one more join from the first address.
	now = now.Add(2 * time.Second)
	if res := a.api("POST", "/api/v1/studies/j/participants", "", "", nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("a join after 2 s: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/studies/j/participants", "", "", nil); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second join after 2 s: %d %s", res.StatusCode, res.body)
	}
}
