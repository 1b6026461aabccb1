package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// OIDCConfig is single sign-on with an OpenID Connect provider (issue 30):
// the authorization code flow with PKCE, state and nonce, the ID token
// verified by go-oidc. An account is matched by the token's verified
// e-mail, and created as a researcher's on its first login.
type OIDCConfig struct {
	Issuer       string // the provider's issuer URL (discovery at Issuer/.well-known/openid-configuration)
	ClientID     string
	ClientSecret string
	// AllowedDomains, when not empty, are the e-mail domains that may log
	// in (e.g. uni-example.de); others are refused.
	AllowedDomains []string
	// Name is the provider's name on the login button ("" : "single sign-on").
	Name string
}

// oidcLoginTTL bounds the time from the login button to the callback.
const oidcLoginTTL = 10 * time.Minute

// oidcStateCookie binds a login's state to the browser that began it.
const oidcStateCookie = "closer_oidc_state"

// oidcClient is the provider found by discovery, made on first use and
// again after a failure (the provider may be down when the server starts).
type oidcClient struct {
	mu       sync.Mutex
	provider *oidc.Provider
}

func (s *Server) oidcProvider(ctx context.Context) (*oidc.Provider, error) {
	s.oidc.mu.Lock()
	defer s.oidc.mu.Unlock()
	if s.oidc.provider == nil {
		p, err := oidc.NewProvider(ctx, s.cfg.OIDC.Issuer)
		if err != nil {
			return nil, &httpError{status: http.StatusBadGateway, msg: "the identity provider cannot be reached: try again later"}
		}
		s.oidc.provider = p
	}
	return s.oidc.provider, nil
}

func (s *Server) oauth2Config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: s.cfg.OIDC.ClientID, ClientSecret: s.cfg.OIDC.ClientSecret,
		Endpoint: p.Endpoint(), RedirectURL: s.publicURL("/admin/login/oidc/callback"),
		Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}
}

// oidcStart sends the browser to the identity provider (GET
// /admin/login/oidc?next=...), with a fresh state (its hash stored, the
// state itself in a cookie of this browser), nonce and PKCE verifier.
func (s *Server) oidcStart(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OIDC == nil {
		return errNotFound
	}
	p, err := s.oidcProvider(r.Context())
	if err != nil {
		return err
	}
	state, nonce, verifier := secret.NewToken(), secret.NewToken(), oauth2.GenerateVerifier()
	next := safeNext(r.URL.Query().Get("next"))
	if err := s.accounts.BeginOIDCLogin(r.Context(), state, account.OIDCLogin{Nonce: nonce, Verifier: verifier, Next: next}, oidcLoginTTL); err != nil {
		return err
	}
	s.setCookie(w, oidcStateCookie, state, "/admin/login/oidc", oidcLoginTTL)
	http.Redirect(w, r, s.oauth2Config(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
	return nil
}

// oidcCallback finishes a single sign-on (GET
// /admin/login/oidc/callback?code=...&state=...): the state must be this
// browser's and unused, the code is exchanged with the PKCE verifier, the
// ID token verified (signature, issuer, audience, expiry) and its nonce
// checked; then the account of its verified e-mail logs in.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OIDC == nil {
		return errNotFound
	}
	ctx := r.Context()
	q := r.URL.Query()
	refuse := func(reason string) error {
		s.audit(r, study.Admin{}, study.AuditEntry{Action: "failed single sign-on", Detail: reason})
		return s.render(w, r, http.StatusUnauthorized, s.loginPage("", "Single sign-on failed: "+reason, "/admin"))
	}
	if e := q.Get("error"); e != "" {
		return refuse("the identity provider said " + e)
	}
	state := q.Get("state")
	c, err := r.Cookie(oidcStateCookie)
	if state == "" || err != nil || c.Value != state {
		return refuse("this login was not begun in this browser")
	}
	login, err := s.accounts.TakeOIDCLogin(ctx, state)
	if err != nil {
		return refuse("this login attempt is unknown, used or expired")
	}
	s.clearCookie(w, oidcStateCookie, "/admin/login/oidc")
	p, err := s.oidcProvider(ctx)
	if err != nil {
		return err
	}
	tok, err := s.oauth2Config(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(login.Verifier))
	if err != nil {
		return refuse("the identity provider did not accept the login code")
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return refuse("the identity provider sent no ID token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.cfg.OIDC.ClientID}).Verify(ctx, raw)
	if err != nil {
		return refuse("the ID token is not valid (" + tokenProblem(err) + ")")
	}
	if idt.Nonce != login.Nonce {
		return refuse("the ID token is not for this login (nonce mismatch)")
	}
	var claims struct {
		Email    string `json:"email"`
		Verified *bool  `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil || claims.Email == "" {
		return refuse("the ID token has no e-mail address")
	}
	if claims.Verified != nil && !*claims.Verified {
		return refuse("the identity provider has not verified the e-mail address")
	}
	email := account.NormalizeEmail(claims.Email)
	if !s.emailDomainAllowed(email) {
		return refuse("e-mail addresses of this domain may not log in here")
	}
	a, created, err := s.accounts.SSOAccount(ctx, email)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, login.Next, created)
}

// emailDomainAllowed reports whether the e-mail's domain may log in.
func (s *Server) emailDomainAllowed(email string) bool {
	if len(s.cfg.OIDC.AllowedDomains) == 0 {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	return at >= 0 && slices.Contains(s.cfg.OIDC.AllowedDomains, strings.ToLower(email[at+1:]))
}

// tokenProblem names why go-oidc refused a token, in words.
func tokenProblem(err error) string {
	var exp *oidc.TokenExpiredError
	switch msg := err.Error(); {
	case errors.As(err, &exp):
		return "expired"
	case strings.Contains(msg, "audience"):
		return "issued for another client"
	case strings.Contains(msg, "issuer"):
		return "issued by another provider"
	}
	return "bad signature or claims"
}

// startSession logs the account in after single sign-on, as the password
// login does, and records it.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, a study.Admin, next string, created bool) error {
	clientText := ""
	if addr := s.clientAddr(r); addr.IsValid() {
		clientText = addr.String()
	}
	token, err := s.accounts.CreateSession(r.Context(), account.NewSession{
		AdminID: a.ID, TTL: s.cfg.SessionTTL, Replaces: presentedSession(r),
		UserAgent: r.UserAgent(), Address: clientText,
	})
	if err != nil {
		return err
	}
	detail := "by single sign-on"
	if created {
		detail += "; account created"
	}
	s.audit(r, a, study.AuditEntry{Action: "login", Detail: detail})
	s.setCookie(w, sessionCookie, token, "/", s.cfg.SessionTTL)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
	return nil
}

// loginPage is the login page: with the single sign-on button when it is
// configured, with the password form unless password login is off.
func (s *Server) loginPage(email, msg, next string) templ.Component {
	if s.cfg.OIDC == nil {
		return templates.LoginPage(email, msg, next)
	}
	name := s.cfg.OIDC.Name
	if name == "" {
		name = "single sign-on"
	}
	return templates.SSOLoginPage(email, msg, next, name, !s.cfg.NoPasswordLogin)
}
