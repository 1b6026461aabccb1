package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// fakeClock is the login throttle's clock in tests: it moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// throttleApp is the real router on a fresh database with a fake clock and
// a captured log; replica starts another router on the same database.
type throttleApp struct {
	*app
	dbURL string
	clock *fakeClock
	log   *logBuffer
	cfg   web.Config
}

func newThrottleApp(t *testing.T, trusted ...string) *throttleApp {
	t.Helper()
	pool, dbURL := pgtest.NewDB(t)
	ta := &throttleApp{dbURL: dbURL, clock: newFakeClock(), log: &logBuffer{}}
	for _, p := range trusted {
		ta.cfg.TrustedProxies = append(ta.cfg.TrustedProxies, netip.MustParsePrefix(p))
	}
	ta.cfg.Now = ta.clock.Now
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	ta.app = &app{t: t, pool: pool, store: store, accounts: accounts, srv: ta.serve(t, store, accounts)}
	if _, err := accounts.CreateAdmin(context.Background(), "r@example.org", "secret-password"); err != nil {
		t.Fatal(err)
	}
	return ta
}

func (ta *throttleApp) serve(t *testing.T, store *collect.Store, accounts *account.Store) *httptest.Server {
	srv := httptest.NewUnstartedServer(nil)
	cfg := ta.cfg
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(ta.log, nil)))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// replica is a second router with its own pool on the same database and clock.
func (ta *throttleApp) replica() *app {
	ta.t.Helper()
	pool, err := pgxpool.New(context.Background(), ta.dbURL)
	if err != nil {
		ta.t.Fatal(err)
	}
	ta.t.Cleanup(pool.Close)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	return &app{t: ta.t, pool: pool, store: store, accounts: accounts, srv: ta.serve(ta.t, store, accounts)}
}

// login posts the login form with extra headers.
func (a *app) login(c *http.Client, email, password string, header map[string]string) response {
	a.t.Helper()
	return a.do(c, "POST", "/admin/login", url.Values{"email": {email}, "password": {password}}, header)
}

func sessionCookieOf(res response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == "closer_session" && c.Value != "" {
			return c
		}
	}
	return nil
}

// wantThrottled checks a 429 with Retry-After secs, a page that says when
// to try again, and no session.
func wantThrottled(t *testing.T, what string, res response, secs int) {
	t.Helper()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != fmt.Sprint(secs) {
		t.Fatalf("%s: %d Retry-After %q, want 429 and %d", what, res.StatusCode, res.Header.Get("Retry-After"), secs)
	}
	if !strings.Contains(res.body, "Too many failed logins. Try again in ") || sessionCookieOf(res) != nil {
		t.Fatalf("%s: page or cookie wrong: %v\n%s", what, res.Cookies(), res.body)
	}
}

func wantStatus(t *testing.T, what string, res response, status int) {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("%s: %d, want %d (Retry-After %q)", what, res.StatusCode, status, res.Header.Get("Retry-After"))
	}
}

// An account may fail 5 times; then each attempt waits 2^k seconds, the
// right password included and unchecked, until the 10th failure locks it
// for 15 minutes; a success resets the count. An unknown e-mail is
// throttled exactly like a real one.
func TestLoginThrottlePerAccount(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	c := a.client()
	for _, email := range []string{"r@example.org", "nobody@example.org"} {
		for i := 1; i <= 5; i++ {
			wantStatus(t, fmt.Sprintf("%s wrong password %d", email, i), a.login(c, email, "wrong-password", nil), http.StatusUnauthorized)
		}
		res := a.login(c, email, "wrong-password", nil)
		wantThrottled(t, email+" 6th attempt", res, 2)
		right := a.login(c, email, "secret-password", nil)
		wantThrottled(t, email+" right password while throttled", right, 2)
		if right.body != res.body {
			t.Fatalf("%s: the right password changed the throttled page", email)
		}
	}
	if a.count(`SELECT count(*) FROM sessions`) != 0 {
		t.Fatal("a throttled login created a session")
	}

	// The delay doubles with each further failure, up to the lockout.
	const email = "r@example.org"
	for k, wait := range []int{2, 4, 8, 16} {
		a.clock.Advance(time.Duration(wait-1) * time.Second)
		wantThrottled(t, fmt.Sprintf("1 s before the %d s delay ends", wait), a.login(c, email, "secret-password", nil), 1)
		a.clock.Advance(time.Second)
		wantStatus(t, fmt.Sprintf("failure %d", 6+k), a.login(c, email, "wrong-password", nil), http.StatusUnauthorized)
		wantThrottled(t, fmt.Sprintf("after failure %d", 6+k), a.login(c, email, "secret-password", nil), 2*wait)
	}
	a.clock.Advance(32 * time.Second)
	wantStatus(t, "failure 10", a.login(c, email, "wrong-password", nil), http.StatusUnauthorized)
	res := a.login(c, email, "secret-password", nil)
	wantThrottled(t, "locked out", res, 900)
	if !strings.Contains(res.body, "Try again in 15 minutes (after 12:16:02 UTC)") {
		t.Fatalf("lockout page does not say when: %s", res.body)
	}
	a.clock.Advance(14 * time.Minute)
	wantThrottled(t, "14 minutes into the lockout", a.login(c, email, "secret-password", nil), 60)

	// The lockout ends; the right password works and resets the account.
	a.clock.Advance(time.Minute)
	res = a.login(c, email, "secret-password", nil)
	if res.StatusCode != http.StatusSeeOther || sessionCookieOf(res) == nil {
		t.Fatalf("right password after the lockout: %d %v", res.StatusCode, res.Cookies())
	}
	// (c is now a known browser of the account: a new one counts.)
	fresh := a.client()
	for i := 1; i <= 5; i++ {
		wantStatus(t, fmt.Sprintf("after the reset, failure %d", i), a.login(fresh, email, "wrong-password", nil), http.StatusUnauthorized)
	}
	wantThrottled(t, "after the reset, 6th attempt", a.login(fresh, email, "wrong-password", nil), 2)

	// Each throttled attempt and each failure that started a delay is a warning.
	logs := a.log.String()
	for _, want := range []string{
		`level=WARN msg="login refused: too many failures" limit=account failures=5 retry_after_s=2 email=r@example.org address=127.0.0.1`,
		`level=WARN msg="login refused: too many failures" limit=account failures=5 retry_after_s=2 email=nobody@example.org`,
		`level=WARN msg="login failed: throttling" limit=account failures=10 blocked_s=900 email=r@example.org`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s\n%s", want, logs)
		}
	}
}

// An address may fail 20 times whatever the e-mails; then it waits too, and
// X-Forwarded-For from an untrusted peer does not get it out.
func TestLoginThrottlePerAddress(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	c := a.client()
	for i := 1; i <= 20; i++ {
		res := a.login(c, fmt.Sprintf("guess%d@example.org", i), "wrong-password", nil)
		wantStatus(t, fmt.Sprintf("failure %d", i), res, http.StatusUnauthorized)
	}
	wantThrottled(t, "21st e-mail", a.login(c, "guess21@example.org", "wrong-password", nil), 2)
	wantThrottled(t, "the right account from that address", a.login(c, "r@example.org", "secret-password", nil), 2)
	wantThrottled(t, "a forged X-Forwarded-For", a.login(c, "r@example.org", "secret-password",
		map[string]string{"X-Forwarded-For": "198.51.100.9"}), 2)
	if !strings.Contains(a.log.String(), `msg="login refused: too many failures" limit=address failures=20`) {
		t.Fatalf("no warning for the address:\n%s", a.log)
	}
	a.clock.Advance(2 * time.Second)
	res := a.login(c, "r@example.org", "secret-password", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("right password after the delay: %d", res.StatusCode)
	}
	// A success takes back only its own attempt: the address is still at
	// 20, so its next failure is the 21st and waits 4 s.
	wantStatus(t, "the address after a success", a.login(c, "guess22@example.org", "wrong-password", nil), http.StatusUnauthorized)
	wantThrottled(t, "after the 21st failure", a.login(c, "guess23@example.org", "wrong-password", nil), 4)
}

// Behind a trusted proxy the client is the address X-Forwarded-For names
// (an IPv6 client counts by its /64); a hop the proxy did not add is not believed.
func TestLoginThrottleBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t, "127.0.0.0/8")
	c := a.client()
	from := func(xff string) map[string]string { return map[string]string{"X-Forwarded-For": xff} }
	for i := 1; i <= 20; i++ {
		// The client's own X-Forwarded-For entry comes first; the proxy appends the real one.
		res := a.login(c, fmt.Sprintf("g%d@example.org", i), "wrong-password", from(fmt.Sprintf("10.9.9.%d, 203.0.113.5", i)))
		wantStatus(t, fmt.Sprintf("failure %d", i), res, http.StatusUnauthorized)
	}
	wantThrottled(t, "203.0.113.5", a.login(c, "g21@example.org", "wrong-password", from("203.0.113.5")), 2)
	wantStatus(t, "another client", a.login(c, "g21@example.org", "wrong-password", from("203.0.113.6")), http.StatusUnauthorized)
	wantThrottled(t, "garbage before the real hop", a.login(c, "g22@example.org", "wrong-password", from("not-an-ip, 203.0.113.5")), 2)

	for i := 1; i <= 20; i++ {
		res := a.login(c, fmt.Sprintf("h%d@example.org", i), "wrong-password", from(fmt.Sprintf("2001:db8:1:2::%x", i)))
		wantStatus(t, fmt.Sprintf("IPv6 failure %d", i), res, http.StatusUnauthorized)
	}
	wantThrottled(t, "same /64", a.login(c, "h21@example.org", "wrong-password", from("2001:db8:1:2:ffff::1")), 2)
	wantStatus(t, "another /64", a.login(c, "h21@example.org", "wrong-password", from("2001:db8:1:3::1")), http.StatusUnauthorized)
}

// Two routers on one database share the counters: failures on either count.
func TestLoginThrottleSharedByReplicas(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	b := a.replica()
	c := a.client()
	for i := 1; i <= 5; i++ {
		on := a.app
		if i%2 == 0 {
			on = b
		}
		wantStatus(t, fmt.Sprintf("failure %d", i), on.login(c, "r@example.org", "wrong-password", nil), http.StatusUnauthorized)
	}
	wantThrottled(t, "6th on replica b", b.login(c, "r@example.org", "secret-password", nil), 2)
	wantThrottled(t, "6th on replica a", a.login(c, "r@example.org", "secret-password", nil), 2)
	a.clock.Advance(2 * time.Second)
	if res := b.login(c, "r@example.org", "secret-password", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the delay on b: %d", res.StatusCode)
	}
	// b's success reset the account for a too.
	for i := 1; i <= 5; i++ {
		wantStatus(t, fmt.Sprintf("after reset, failure %d on a", i), a.login(c, "r@example.org", "wrong-password", nil), http.StatusUnauthorized)
	}
}

// Logging in revokes the session the browser presented, whoever's it was.
func TestLoginRevokesPresentedSession(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	if _, err := a.accounts.CreateAdmin(context.Background(), "other@example.org", "other-password"); err != nil {
		t.Fatal(err)
	}
	c := a.client()
	first := sessionCookieOf(a.login(c, "other@example.org", "other-password", nil))
	if first == nil {
		t.Fatal("no session")
	}
	// The same browser logs in as someone else: the old session is gone.
	second := sessionCookieOf(a.login(c, "r@example.org", "secret-password", nil))
	if second == nil || second.Value == first.Value {
		t.Fatalf("second login: %v", second)
	}
	stale := a.client()
	u, _ := url.Parse(a.srv.URL)
	stale.Jar.SetCookies(u, []*http.Cookie{{Name: "closer_session", Value: first.Value, Path: "/"}})
	if res := a.do(stale, "GET", "/admin", nil, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the presented session still works: %d", res.StatusCode)
	}
	if res := a.do(c, "GET", "/admin/account", nil, nil); res.StatusCode != 200 || !strings.Contains(res.body, "Logged in as r@example.org") {
		t.Fatalf("the new session: %d", res.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM sessions`); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
}

// The account page lists the admin's sessions (browser, address, times) and
// revokes one, or all but this one; another admin's session is not theirs.
func TestAccountSessions(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t, "127.0.0.0/8")
	if _, err := a.accounts.CreateAdmin(context.Background(), "other@example.org", "other-password"); err != nil {
		t.Fatal(err)
	}
	browsers := map[string]*http.Client{}
	for _, b := range []struct{ ua, addr string }{
		{"Firefox/1 <script>x</script>", "203.0.113.1"}, {"Safari/2", "203.0.113.2"}, {"Chrome/3", "2001:db8::7"},
	} {
		c := a.client()
		res := a.login(c, "r@example.org", "secret-password", map[string]string{"User-Agent": b.ua, "X-Forwarded-For": b.addr})
		wantStatus(t, "login "+b.ua, res, http.StatusSeeOther)
		browsers[b.ua[:6]] = c
	}
	otherAdmin := a.client()
	wantStatus(t, "other admin", a.login(otherAdmin, "other@example.org", "other-password", nil), http.StatusSeeOther)

	page := a.do(browsers["Firefo"], "GET", "/admin/account", nil, nil)
	for _, want := range []string{"Firefox/1 &lt;script&gt;x&lt;/script&gt;", "203.0.113.1", "Safari/2", "203.0.113.2", "Chrome/3", "2001:db8::7", "this browser", "Log out all other sessions"} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("account page lacks %q:\n%s", want, page.body)
		}
	}
	if strings.Contains(page.body, "<script>x") || strings.Contains(page.body, "Go-http-client") {
		t.Fatalf("account page shows markup or another admin's session")
	}
	if n := strings.Count(page.body, "/admin/account/sessions/"); n != 3 { // two revoke buttons and revoke-others
		t.Fatalf("%d session forms, want 3", n)
	}
	var ids [4]int64
	for i, ua := range []string{"Firefox/1 <script>x</script>", "Safari/2", "Chrome/3"} {
		if err := a.pool.QueryRow(context.Background(), `SELECT id FROM sessions WHERE user_agent = $1`, ua).Scan(&ids[i]); err != nil {
			t.Fatal(ua, err)
		}
	}
	if err := a.pool.QueryRow(context.Background(), `SELECT s.id FROM sessions s JOIN admins a ON a.id = s.admin_id WHERE a.email = 'other@example.org'`).Scan(&ids[3]); err != nil {
		t.Fatal(err)
	}

	// Another admin's session cannot be revoked from here.
	res := a.do(browsers["Firefo"], "POST", fmt.Sprintf("/admin/account/sessions/%d/revoke", ids[3]), url.Values{}, nil)
	wantStatus(t, "revoke another admin's session", res, http.StatusNotFound)
	wantStatus(t, "the other admin still in", a.do(otherAdmin, "GET", "/admin", nil, nil), http.StatusOK)

	res = a.do(browsers["Firefo"], "POST", fmt.Sprintf("/admin/account/sessions/%d/revoke", ids[1]), url.Values{}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/account" {
		t.Fatalf("revoke: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	wantStatus(t, "revoked Safari", a.do(browsers["Safari"], "GET", "/admin", nil, nil), http.StatusSeeOther)
	wantStatus(t, "Chrome still in", a.do(browsers["Chrome"], "GET", "/admin", nil, nil), http.StatusOK)

	wantStatus(t, "revoke others", a.do(browsers["Firefo"], "POST", "/admin/account/sessions/revoke-others", url.Values{}, nil), http.StatusSeeOther)
	wantStatus(t, "Chrome after revoke-others", a.do(browsers["Chrome"], "GET", "/admin", nil, nil), http.StatusSeeOther)
	wantStatus(t, "Firefox after revoke-others", a.do(browsers["Firefo"], "GET", "/admin", nil, nil), http.StatusOK)
	wantStatus(t, "the other admin after revoke-others", a.do(otherAdmin, "GET", "/admin", nil, nil), http.StatusOK)
	page = a.do(browsers["Firefo"], "GET", "/admin/account", nil, nil)
	if strings.Contains(page.body, "Chrome/3") || strings.Contains(page.body, "Log out all other sessions") {
		t.Fatalf("revoked sessions still listed")
	}
	// Revoking this browser's own session logs it out.
	wantStatus(t, "revoke own", a.do(browsers["Firefo"], "POST", fmt.Sprintf("/admin/account/sessions/%d/revoke", ids[0]), url.Values{}, nil), http.StatusSeeOther)
	wantStatus(t, "Firefox after revoking itself", a.do(browsers["Firefo"], "GET", "/admin", nil, nil), http.StatusSeeOther)
}

// After login, next is followed only when it is a clean path on this site
// (the full table of attacks is TestSafeNext).
func TestLoginNextStaysOnSite(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	for next, want := range map[string]string{
		"/%09/evil.com": "/admin", "/\tevil.com": "/admin", "//evil.com": "/admin", "/%2F%2Fevil.com": "/admin",
		"/admin/studies/x?tab=2": "/admin/studies/x?tab=2",
	} {
		res := a.do(a.client(), "POST", "/admin/login", url.Values{"email": {"r@example.org"}, "password": {"secret-password"}, "next": {next}}, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("next=%q: %d Location %q, want %q", next, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
	// The login page keeps only a safe next in its form.
	if res := a.do(a.client(), "GET", "/admin/login?next="+url.QueryEscape("/%09/evil.com"), nil, nil); !strings.Contains(res.body, `name="next" value="/admin"`) {
		t.Errorf("login page next: %s", res.body)
	}
}
