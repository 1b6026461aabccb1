package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// The login throttle's default policy (docs/web.md, "Admin login";
// docs/security.md, "Login throttling"): an account may fail 5 times and
// an address (or a known browser) 20 times; from then on each
// failure doubles the wait before the next attempt (2 s, 4 s, ... up to 15
// minutes), and from 10 (account) or 30 (address) failures on each failure
// locks for 15 minutes. A counter is forgotten 15 minutes after its last
// failure and block have passed.
var (
	defaultAccountLoginLimit = account.LoginLimit{Free: 5, Lockout: 10, LockoutFor: 15 * time.Minute, Window: 15 * time.Minute}
	defaultAddressLoginLimit = account.LoginLimit{Free: 20, Lockout: 30, LockoutFor: 15 * time.Minute, Window: 15 * time.Minute}
)

// deviceCookie holds a browser's device token: set at a successful login
// and sent back with later logins only (path /admin/login), it makes the
// browser known to the accounts it logged in to, which the login throttle
// does not hold for a stranger's failures (collect.AdmitLogin).
const deviceCookie = "closer_device"

// presentedDevice returns the device token the browser presented, if it
// looks like one (collect.NewDeviceToken: 43 base64url characters).
func presentedDevice(r *http.Request) string {
	c, err := r.Cookie(deviceCookie)
	if err != nil || len(c.Value) != 43 {
		return ""
	}
	for _, ch := range c.Value {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return ""
		}
	}
	return c.Value
}

// maxLoginForm bounds the login request body.
const maxLoginForm = 16 << 10

// loginDefaults fills the login settings left unset.
func (c *Config) loginDefaults() {
	if c.LoginAccountLimit == (account.LoginLimit{}) {
		c.LoginAccountLimit = defaultAccountLoginLimit
	}
	if c.LoginAddressLimit == (account.LoginLimit{}) {
		c.LoginAddressLimit = defaultAddressLoginLimit
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// safeNext keeps a post-login redirect on this site: it returns next only
// if it is a clean absolute path ("/admin/studies/x?tab=2"), and "/admin"
// otherwise. Anything a browser might read as another host is refused:
// schemes, hosts, "//" and "/\" (browsers treat "\" as "/"), control
// characters and spaces (browsers strip tabs and newlines, so "/\t/evil"
// becomes "//evil"), non-ASCII, and paths whose decoded form is not clean
// ("/%2F%2Fevil.com", "/a/../..//evil").
func safeNext(next string) string {
	const home = "/admin"
	if next == "" || len(next) > 2048 {
		return home
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return home
		}
	}
	if next[0] != '/' || strings.HasPrefix(next, "//") {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return home
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\") || !utf8.ValidString(p) {
		return home
	}
	for _, r := range p {
		if r < ' ' || r == 0x7f {
			return home
		}
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p {
		return home
	}
	return next
}

// loginForm shows the login page (GET /admin/login).
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := s.accounts.SessionAdmin(r.Context(), c.Value); err == nil {
			http.Redirect(w, r, "/admin", http.StatusSeeOther)
			return nil
		}
	}
	return s.render(w, r, http.StatusOK, s.loginPage("", "", safeNext(r.URL.Query().Get("next"))))
}

// login checks the e-mail and password and starts a session (POST
// /admin/login). Every attempt first passes the throttle; a throttled
// attempt gets 429 without its password being looked at, so a locked-out
// guesser learns nothing even from the right password.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.NoPasswordLogin {
		return &httpError{status: http.StatusForbidden, msg: "password login is switched off here: log in by single sign-on"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginForm)
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	ctx := r.Context()
	email, password, next := r.PostForm.Get("email"), r.PostForm.Get("password"), safeNext(r.PostForm.Get("next"))
	client := s.clientAddr(r)
	address := throttleAddress(client)
	who := account.LoginClient{Address: address, Device: presentedDevice(r)}
	gate, err := s.accounts.AdmitLogin(ctx, s.cfg.Now(), email, who, s.cfg.LoginAccountLimit, s.cfg.LoginAddressLimit)
	if err != nil {
		return err
	}
	if !gate.Admitted {
		wait := int64(math.Ceil(gate.RetryAfter.Seconds()))
		s.log.WarnContext(ctx, "login refused: too many failures", "limit", gate.Limit, "failures", gate.Failures,
			"retry_after_s", wait, "email", loggableEmail(email), "address", address)
		w.Header().Set("Retry-After", strconv.FormatInt(wait, 10))
		msg := fmt.Sprintf("Too many failed logins. Try again in %s (after %s); until then no password is checked.",
			waitText(wait), s.cfg.Now().Add(time.Duration(wait)*time.Second).UTC().Format("15:04:05 UTC"))
		s.audit(r, study.Admin{}, study.AuditEntry{Email: loggableEmail(email), Action: "login refused: too many failures"})
		return s.render(w, r, http.StatusTooManyRequests, s.loginPage(email, msg, next))
	}
	a, err := s.accounts.Authenticate(ctx, email, password)
	if collect.KindOf(err) == study.KindUnauthorized {
		if gate.Delay > 0 {
			s.log.WarnContext(ctx, "login failed: throttling", "limit", gate.Limit, "failures", gate.Failures,
				"blocked_s", int64(gate.Delay.Seconds()), "email", loggableEmail(email), "address", address)
		}
		s.audit(r, study.Admin{}, study.AuditEntry{Email: loggableEmail(email), Action: "failed login"})
		return s.render(w, r, http.StatusUnauthorized, s.loginPage(email, "Wrong e-mail or password.", next))
	}
	if err != nil {
		return err
	}
	if who.Device == "" {
		who.Device = account.NewDeviceToken()
	}
	if err := s.accounts.LoginSucceeded(ctx, s.cfg.Now(), email, who, gate); err != nil {
		return err
	}
	clientText := ""
	if client.IsValid() {
		clientText = client.String()
	}
	token, err := s.accounts.CreateSession(ctx, account.NewSession{
		AdminID: a.ID, TTL: s.cfg.SessionTTL, Replaces: presentedSession(r),
		UserAgent: r.UserAgent(), Address: clientText,
	})
	if err != nil {
		return err
	}
	s.audit(r, a, study.AuditEntry{Action: "login", Detail: "with a password"})
	s.setCookie(w, sessionCookie, token, "/", s.cfg.SessionTTL)
	s.setCookie(w, deviceCookie, who.Device, "/admin/login", account.DeviceTTL)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// waitText says a wait of secs seconds in words.
func waitText(secs int64) string {
	switch {
	case secs == 1:
		return "1 second"
	case secs < 90:
		return fmt.Sprintf("%d seconds", secs)
	default:
		return fmt.Sprintf("%d minutes", (secs+59)/60)
	}
}

// loggableEmail is the typed e-mail as a log line may carry it: bounded, and
// only if it looks like an address (people type passwords into the e-mail
// field too).
func loggableEmail(email string) string {
	email = account.NormalizeEmail(email)
	if len(email) > 254 || !utf8.ValidString(email) || !strings.Contains(email, "@") || strings.ContainsFunc(email, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "(not an e-mail address)"
	}
	return email
}
