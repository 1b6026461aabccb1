package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
	"golang.org/x/crypto/bcrypt"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
)

// oidcProvider is a real OIDC provider in the test process (mockoidc)
// whose token endpoint can be made to hand out an ID token for another
// client.
type oidcProvider struct {
	*mockoidc.MockOIDC
	wrongAudience atomic.Bool
}

func newOIDCProvider(t *testing.T) *oidcProvider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{MockOIDC: m}
	err = m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/token") || !p.wrongAudience.Load() {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Error(err)
				return
			}
			claims := jwt.MapClaims{}
			if _, _, err := jwt.NewParser().ParseUnverified(body["id_token"].(string), claims); err != nil {
				t.Error(err)
				return
			}
			claims["aud"] = "another-client"
			if body["id_token"], err = m.Keypair.SignJWT(claims); err != nil {
				t.Error(err)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// newOIDCApp is newApp with single sign-on at p.
func newOIDCApp(t *testing.T, p *oidcProvider, domains []string, noPassword bool) *app {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	cfg := p.Config()
	srv.Config.Handler = web.New(store, accounts, web.Config{BaseURL: base, NoPasswordLogin: noPassword,
		OIDC: &web.OIDCConfig{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AllowedDomains: domains, Name: "Example University"}}, log)
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}
}

// ssoLogin runs the browser's part of a single sign-on: the login button,
// the provider's authorization endpoint (tamper may change its URL), and
// the callback. It returns the callback's path and response.
func (a *app) ssoLogin(c *http.Client, tamper func(*url.URL)) (string, response) {
	a.t.Helper()
	res := a.do(c, "GET", "/admin/login/oidc?next=/admin/account", nil, nil)
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("the login button: %d %s", res.StatusCode, res.body)
	}
	auth, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		a.t.Fatal(err)
	}
	q := auth.Query()
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" {
		a.t.Fatalf("the authorization request lacks PKCE, nonce or state: %s", auth)
	}
	if tamper != nil {
		tamper(auth)
	}
	provider := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pres, err := provider.Get(auth.String())
	if err != nil {
		a.t.Fatal(err)
	}
	_ = pres.Body.Close()
	cb, err := url.Parse(pres.Header.Get("Location"))
	if err != nil || cb.Path != "/admin/login/oidc/callback" {
		a.t.Fatalf("the provider's redirect: %d %q", pres.StatusCode, pres.Header.Get("Location"))
	}
	path := cb.RequestURI()
	return path, a.do(c, "GET", path, nil, nil)
}

// Single sign-on against a real provider: a first login creates a
// researcher's account, a known e-mail logs in to its account; a replayed
// state, a state from another browser, a nonce mismatch, an ID token for
// another client, an expired one and an e-mail of another domain are all
// refused, logged in nobody, and are in the audit trail.
func TestOIDCLogin(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	a := newOIDCApp(t, p, []string{"uni.example"}, false)
	ctx := context.Background()
	if _, err := a.accounts.CreateAdmin(ctx, "boss@uni.example", "secret-password"); err != nil {
		t.Fatal(err)
	}
	user := func(email string) { p.QueueUser(&mockoidc.MockUser{Subject: email, Email: email, EmailVerified: true}) }
	loggedIn := func(c *http.Client) bool {
		res := a.do(c, "GET", "/admin", nil, nil)
		return res.StatusCode == http.StatusOK
	}

	// A first login.
	c := a.client()
	user("ada@uni.example")
	callback, res := a.ssoLogin(c, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/account" || !loggedIn(c) {
		t.Fatalf("first login: %d %q %s", res.StatusCode, res.Header.Get("Location"), res.body)
	}
	ada, err := a.accounts.AdminByEmail(ctx, "ada@uni.example")
	if err != nil || ada.SiteAdmin {
		t.Fatalf("the account of the first login: %+v, %v; want a researcher", ada, err)
	}
	if res := a.do(c, "GET", "/admin/account", nil, nil); strings.Contains(res.body, "boss@uni.example") {
		t.Error("a researcher made by single sign-on sees the accounts")
	}
	// The same callback again, with the state's cookie: the state works once.
	state := func(path string) string {
		u, _ := url.Parse(path)
		return u.Query().Get("state")
	}
	replay := a.do(a.client(), "GET", callback, nil, map[string]string{"Cookie": "closer_oidc_state=" + state(callback)})
	if replay.StatusCode != http.StatusUnauthorized || !strings.Contains(replay.body, "unknown, used or expired") {
		t.Errorf("a replayed state: %d, want 401", replay.StatusCode)
	}

	// A known e-mail logs in to its account.
	boss := a.client()
	user("boss@uni.example")
	if _, res := a.ssoLogin(boss, nil); res.StatusCode != http.StatusSeeOther ||
		!strings.Contains(a.do(boss, "GET", "/admin/account", nil, nil).body, "ada@uni.example") {
		t.Fatalf("the site administrator's single sign-on: %d", res.StatusCode)
	}

	refusals := []struct {
		name, email, want string
		before, after     func()
		tamper            func(*url.URL)
		otherBrowser      bool
	}{
		{name: "nonce mismatch", email: "n@uni.example", want: "nonce mismatch", tamper: func(u *url.URL) {
			q := u.Query()
			q.Set("nonce", "a-nonce-of-another-login")
			u.RawQuery = q.Encode()
		}},
		{name: "wrong audience", email: "w@uni.example", want: "issued for another client",
			before: func() { p.wrongAudience.Store(true) }, after: func() { p.wrongAudience.Store(false) }},
		{name: "expired token", email: "x@uni.example", want: "expired",
			before: func() { p.FastForward(-2 * time.Hour) }, after: func() { p.FastForward(2 * time.Hour) }},
		{name: "another domain", email: "eve@other.example", want: "of this domain may not log in"},
		{name: "state of another browser", email: "s@uni.example", want: "not begun in this browser", otherBrowser: true},
	}
	for _, r := range refusals {
		user(r.email)
		if r.before != nil {
			r.before()
		}
		c := a.client()
		var res response
		if r.otherBrowser {
			// The callback arrives in a browser that did not begin the login.
			res0 := a.do(c, "GET", "/admin/login/oidc", nil, nil)
			provider := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			pres, err := provider.Get(res0.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			_ = pres.Body.Close()
			cb, _ := url.Parse(pres.Header.Get("Location"))
			c = a.client()
			res = a.do(c, "GET", cb.RequestURI(), nil, nil)
		} else {
			_, res = a.ssoLogin(c, r.tamper)
		}
		if r.after != nil {
			r.after()
		}
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.body, r.want) {
			t.Errorf("%s: %d, want 401 saying %q: %s", r.name, res.StatusCode, r.want, res.body)
		}
		if loggedIn(c) {
			t.Errorf("%s: the browser is logged in", r.name)
		}
		if n := a.count(`SELECT count(*) FROM admins WHERE email = $1`, r.email); n != 0 {
			t.Errorf("%s: an account was made", r.name)
		}
	}
	if n := a.count(`SELECT count(*) FROM audit_log WHERE action = 'failed single sign-on'`); n != len(refusals)+1 {
		t.Errorf("%d failed single sign-ons in the audit trail, want %d", n, len(refusals)+1)
	}
	if n := a.count(`SELECT count(*) FROM audit_log WHERE action = 'login' AND detail = 'by single sign-on; account created'`); n != 1 {
		t.Errorf("%d account-creating single sign-ons in the audit trail, want 1", n)
	}
}

// With password login switched off the login page offers single sign-on
// only and the password form's requests are refused, right password or not.
func TestOIDCPasswordLoginOff(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	a := newOIDCApp(t, p, nil, true)
	if _, err := a.accounts.CreateAdmin(context.Background(), "r@example.org", "secret-password"); err != nil {
		t.Fatal(err)
	}
	page := a.do(a.client(), "GET", "/admin/login", nil, nil)
	if page.StatusCode != http.StatusOK || !strings.Contains(page.body, "Log in with Example University") || strings.Contains(page.body, `name="password"`) {
		t.Fatalf("the login page: %d %s", page.StatusCode, page.body)
	}
	if res := a.login(a.client(), "r@example.org", "secret-password", nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a password login: %d, want 403", res.StatusCode)
	}
	c := a.client()
	p.QueueUser(&mockoidc.MockUser{Subject: "r", Email: "r@example.org", EmailVerified: true})
	if _, res := a.ssoLogin(c, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("single sign-on: %d %s", res.StatusCode, res.body)
	}
}
