package study

import (
	"net/url"
	"regexp"
	"strings"
)

// Recruiting platforms a study can take participants from.
const (
	PlatformNone     = ""         // links shared by the researcher
	PlatformProlific = "prolific" // PROLIFIC_PID, STUDY_ID, SESSION_ID
	PlatformGeneric  = "generic"  // an id parameter and a return URL the researcher names
	PlatformMTurk    = "mturk"    // an ExternalQuestion HIT: workerId, assignmentId, hitId, turkSubmitTo
)

// Platforms lists the platforms in the order the study form offers them.
var Platforms = []string{PlatformNone, PlatformProlific, PlatformMTurk, PlatformGeneric}

// ProlificCompleteURL is where a Prolific participant is sent at the end,
// with the code as cc.
const ProlificCompleteURL = "https://app.prolific.com/submissions/complete"

// Platform is how a study recruits: which platform, the completion code
// every participant who finishes is given (instead of one random code
// each), the code given instead to participants excluded by the
// researcher, and for a generic platform the URL parameter that carries a
// participant's id and the URL they return to. Stored as studies.platform.
type Platform struct {
	Kind            string `json:"kind,omitempty"`
	CompletionCode  string `json:"completion_code,omitempty"`
	ScreenedOutCode string `json:"screened_out_code,omitempty"`
	IDParam         string `json:"id_param,omitempty"`
	ReturnURL       string `json:"return_url,omitempty"`
}

// ProlificParams are the link parameters a Prolific participant arrives
// with besides PROLIFIC_PID; they are kept with the participant.
var ProlificParams = []string{"STUDY_ID", "SESSION_ID"}

// MTurkParams are the link parameters of an MTurk ExternalQuestion besides
// workerId; they are kept with the participant, and the last page submits
// the assignment to turkSubmitTo.
var MTurkParams = []string{"assignmentId", "hitId", "turkSubmitTo"}

// MTurkPreviewAssignment is the assignmentId MTurk sends while a worker
// only previews the HIT (before accepting it).
const MTurkPreviewAssignment = "ASSIGNMENT_ID_NOT_AVAILABLE"

// MTurkSubmitOrigins are where MTurk submits assignments, live and
// sandbox: the only turkSubmitTo values accepted (and so the only
// addresses an MTurk study's last page posts to).
var MTurkSubmitOrigins = []string{"https://www.mturk.com", "https://workersandbox.mturk.com"}

// MTurkFrameOrigins are the MTurk pages that may show an MTurk study in
// their iframe: the worker site live workers use (worker.mturk.com), the
// sandbox's, and www.mturk.com (the requester's preview of a HIT).
var MTurkFrameOrigins = []string{"https://worker.mturk.com", "https://www.mturk.com", "https://workersandbox.mturk.com"}

var (
	codeRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	idParamRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
)

// checkPlatform normalises p and returns a user-facing error naming the
// first rule it breaks. Settings of another platform than the chosen one
// are dropped, so a study keeps only what applies to it.
func CheckPlatform(p *Platform) error {
	p.Kind = strings.TrimSpace(p.Kind)
	p.CompletionCode = strings.TrimSpace(p.CompletionCode)
	p.ScreenedOutCode = strings.TrimSpace(p.ScreenedOutCode)
	p.IDParam = strings.TrimSpace(p.IDParam)
	p.ReturnURL = strings.TrimSpace(p.ReturnURL)
	switch p.Kind {
	case PlatformNone:
		*p = Platform{}
		return nil
	case PlatformProlific:
		p.IDParam, p.ReturnURL = "", ""
		if p.CompletionCode == "" {
			return Errorf(KindInvalid, "a Prolific study needs its completion code (Prolific shows it under the study's completion paths)")
		}
	case PlatformMTurk:
		// MTurk takes the code back as an answer of the HIT, so a code of
		// each participant's own (the default) tells workers apart.
		p.IDParam, p.ReturnURL = "", ""
	case PlatformGeneric:
		if !idParamRE.MatchString(p.IDParam) {
			return Errorf(KindInvalid, "the participant id parameter %q must be a letter followed by up to 63 letters, digits or underscores", p.IDParam)
		}
		if p.ReturnURL != "" {
			u, err := url.Parse(strings.NewReplacer("{code}", "CODE", "{external_id}", "ID").Replace(p.ReturnURL))
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(p.ReturnURL) > 2000 {
				return Errorf(KindInvalid, "the return URL must be an http or https address of at most 2000 characters ({code} and {external_id} are filled in)")
			}
		}
	default:
		return Errorf(KindInvalid, "unknown platform %q (none, prolific, mturk or generic)", p.Kind)
	}
	for _, c := range []string{p.CompletionCode, p.ScreenedOutCode} {
		if c != "" && !codeRE.MatchString(c) {
			return Errorf(KindInvalid, "the code %q must be 1 to 64 letters, digits, dashes or underscores", c)
		}
	}
	return nil
}

// IDParams returns the URL parameters that carry a participant's id on the
// study's landing page, the first one present wins: the platform's own,
// or for a study without a platform the usual ones.
func (p Platform) IDParams() []string {
	switch p.Kind {
	case PlatformProlific:
		return []string{"PROLIFIC_PID"}
	case PlatformMTurk:
		return []string{"workerId"}
	case PlatformGeneric:
		return []string{p.IDParam}
	}
	return []string{"PROLIFIC_PID", "workerId", "participant"}
}

// RequiresID says whether a participant joins the study only with the
// platform's id for them (IDParams): on Prolific, MTurk and a generic
// platform, so that each id is one participant and the exclusion of
// earlier studies' participants holds. A study without a platform also
// takes people who bring no id.
func (p Platform) RequiresID() bool { return p.Kind != PlatformNone }

// KeptParams returns the link parameters kept with a participant.
func (p Platform) KeptParams() []string {
	switch p.Kind {
	case PlatformProlific:
		return ProlificParams
	case PlatformMTurk:
		return MTurkParams
	}
	return nil
}

// ReturnLink returns where a participant who finished with code goes back
// to, or "" when the study sends them nowhere (an MTurk participant's
// last page posts the code to MTurk instead).
func (p Platform) ReturnLink(code, externalID string) string {
	switch p.Kind {
	case PlatformProlific:
		return ProlificCompleteURL + "?cc=" + url.QueryEscape(code)
	case PlatformGeneric:
		return strings.NewReplacer("{code}", url.QueryEscape(code), "{external_id}", url.QueryEscape(externalID)).Replace(p.ReturnURL)
	}
	return ""
}
