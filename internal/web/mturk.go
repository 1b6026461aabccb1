package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
)

// mturkIDRE is what MTurk's worker, assignment and HIT ids look like
// (upper-case letters and digits, about 30 of them), with some room.
var mturkIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// withTestOrigins returns origins followed, in tests only, by the
// stand-ins of Config.MTurkTestOrigins.
func withTestOrigins(origins []string, cfg Config) []string {
	out := append([]string(nil), origins...)
	for _, o := range cfg.MTurkTestOrigins {
		out = append(out, strings.TrimRight(o, "/"))
	}
	return out
}

// mturkSubmitURL returns where an assignment is submitted for the
// turkSubmitTo MTurk put in the link, and false unless it is exactly one of
// the allowed origins (so the last page never posts a worker's code to
// an address a link made up).
func (s *Server) mturkSubmitURL(turkSubmitTo string) (string, bool) {
	u, err := url.Parse(turkSubmitTo)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	origin := u.Scheme + "://" + u.Host
	for _, o := range s.mturkSubmitOrigins {
		if origin == o {
			return origin + "/mturk/externalSubmit", true
		}
	}
	return "", false
}

// isMTurkPreview says whether an MTurk link is a preview of the HIT
// (assignmentId ASSIGNMENT_ID_NOT_AVAILABLE) or has no assignment at all
// (the study's link opened outside MTurk): then nothing may be created.
func isMTurkPreview(assignmentID string) bool {
	return assignmentID == "" || assignmentID == study.MTurkPreviewAssignment
}

// checkMTurkAssignment checks the parameters of an accepted MTurk
// assignment, from the link or the start form, and names the first one
// that is wrong.
func (s *Server) checkMTurkAssignment(workerID, assignmentID, hitID, turkSubmitTo string) error {
	for _, f := range []struct{ name, value string }{{"workerId", workerID}, {"assignmentId", assignmentID}, {"hitId", hitID}} {
		if !mturkIDRE.MatchString(f.value) {
			return s.refuse(http.StatusBadRequest, i18n.MTurkBadID, f.name)
		}
	}
	if assignmentID == study.MTurkPreviewAssignment {
		return s.refuse(http.StatusBadRequest, i18n.MTurkIsPreview)
	}
	if _, ok := s.mturkSubmitURL(turkSubmitTo); !ok {
		return s.refuse(http.StatusBadRequest, i18n.MTurkSubmitTo, strings.Join(study.MTurkSubmitOrigins, " or "))
	}
	return nil
}

// contentSecurityPolicy is the policy of every response: frameAncestors
// may frame it, its forms may post to formAction. media-src says outright
// (default-src would too) that sound items play from this server only.
func contentSecurityPolicy(frameAncestors, formAction string) string {
	return "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors " +
		frameAncestors + "; form-action " + formAction
}

// allowMTurkFraming lets MTurk (only) show the response in its HIT's
// iframe (collect.MTurkFrameOrigins), and the page's form post the
// assignment to MTurk (collect.MTurkSubmitOrigins, where turkSubmitTo
// points). Every other response keeps frame-ancestors 'none' and
// X-Frame-Options DENY (securityHeaders).
func (s *Server) allowMTurkFraming(w http.ResponseWriter) {
	w.Header().Del("X-Frame-Options") // DENY would win over frame-ancestors in older browsers
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy(strings.Join(s.mturkFrameOrigins, " "),
		"'self' "+strings.Join(s.mturkSubmitOrigins, " ")))
}
