package web

import (
	"strings"
	"testing"
)

// safeNext refuses every redirect target a browser could take off-site and
// keeps clean paths on this site.
func TestSafeNext(t *testing.T) {
	t.Parallel()
	attacks := []string{
		"/%09/evil.com", "/\t/evil.com", "/\tevil.com", "/\\evil.com", "/\\\\evil.com", "\\\\evil.com", "//evil.com",
		"///evil.com", "https://evil.com", "http:evil.com", "/%2F%2Fevil.com", "/%2f/evil.com", "/%5Cevil.com",
		"javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "/\n/evil.com", "/\r\n/evil.com", "/%0A/evil.com",
		"/%00", "/%7F", " /admin", "/ /evil.com", "evil.com", "admin", "", "/admin/../..//evil.com", "/./evil.com",
		"/admin/%2e%2e/%2e%2e//evil.com", "/\u3000/evil.com", "/\u00a0evil.com", "/%E3%80%80/x/../y", "//%09evil.com",
		"/%", "/admin?x=%zz\x00", "/" + strings.Repeat("a", 3000),
	}
	for _, next := range attacks {
		if got := safeNext(next); got != "/admin" {
			t.Errorf("safeNext(%.60q) = %.60q, want /admin", next, got)
		}
	}
	for _, next := range []string{"/admin", "/admin/account", "/admin/studies/x?tab=2&a=%2F//b", "/s/demo", "/admin/studies/", "/admin/studies/x#results", "/admin/studies/caf%C3%A9"} {
		if got := safeNext(next); got != next {
			t.Errorf("safeNext(%q) = %q, want it kept", next, got)
		}
	}
}
