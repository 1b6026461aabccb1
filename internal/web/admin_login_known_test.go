package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A stranger who fails on purpose cannot lock the admin out: after 50
// failures for r@example.org from one address (renewing the account's
// 15-minute lockout), the admin's browser, known from an earlier login,
// logs in at once, even from the stranger's address; a browser that never
// logged in to the account is held by the account's lockout, from any
// address, and the known browser's login does not lift it; a cookie of
// another account's browser, or a forged one, does not help.
func TestLoginKnownBrowserEscapesAttack(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t, "127.0.0.0/8")
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	const attacker, admin, newAddr = "198.51.100.66", "203.0.113.5", "203.0.113.9"
	if _, err := a.accounts.CreateAdmin(context.Background(), "other@example.org", "other-password"); err != nil {
		t.Fatal(err)
	}

	known := a.client()
	if res := a.login(known, "r@example.org", "secret-password", from(admin)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the admin's first login: %d", res.StatusCode)
	}
	otherBrowser := a.client()
	if res := a.login(otherBrowser, "other@example.org", "other-password", from(newAddr)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("another admin's login: %d", res.StatusCode)
	}

	// The attack: 50 failures from one address, waiting out each delay.
	evil := a.client()
	failures := 0
	for failures < 50 {
		res := a.login(evil, "r@example.org", "wrong-password", from(attacker))
		switch res.StatusCode {
		case http.StatusUnauthorized:
			failures++
		case http.StatusTooManyRequests:
			secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
			if err != nil || secs < 1 {
				t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
			}
			a.clock.Advance(time.Duration(secs) * time.Second)
		default:
			t.Fatalf("attack attempt: %d", res.StatusCode)
		}
	}

	// The known browser logs in at once, from its usual address and from
	// the attacker's own.
	for _, addr := range []string{admin, attacker} {
		if res := a.login(known, "r@example.org", "secret-password", from(addr)); res.StatusCode != http.StatusSeeOther || sessionCookieOf(res) == nil {
			t.Fatalf("the known browser from %s during the attack: %d (Retry-After %q), want 303", addr, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	// Its own mistakes count on its own counter, not the account's lockout.
	wantStatus(t, "the known browser's wrong password", a.login(known, "r@example.org", "wrong-password", from(admin)), http.StatusUnauthorized)

	// Unknown browsers are held by the account's lockout, from any
	// address, right password or not.
	for what, c := range map[string]*http.Client{
		"a new browser":                  a.client(),
		"another account's browser":      otherBrowser,
		"a browser with a forged cookie": forgedDevice(a),
	} {
		res := a.login(c, "r@example.org", "secret-password", from(newAddr))
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		if res.StatusCode != http.StatusTooManyRequests || secs < 1 || secs > 900 || sessionCookieOf(res) != nil {
			t.Fatalf("%s from a new address: %d Retry-After %q, want 429 within 15 minutes", what, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	// One session each for the known browser (a login replaces the
	// session it presents) and the other admin's: none for the held ones.
	if n := a.count(`SELECT count(*) FROM sessions`); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

// forgedDevice is a client whose device cookie was never set by a login.
func forgedDevice(a *throttleApp) *http.Client {
	c := a.client()
	req, _ := http.NewRequest("GET", a.srv.URL+"/admin/login", nil)
	c.Jar.SetCookies(req.URL, []*http.Cookie{{Name: "closer_device", Value: fmt.Sprintf("%043d", 7), Path: "/admin/login"}})
	return c
}
