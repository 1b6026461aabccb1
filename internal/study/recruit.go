package study

import (
	"encoding/xml"
	"net/url"
	"strconv"
	"strings"
)

// RecruitLink is a text a researcher pastes into a recruiting platform to
// send people to a study: what it is (Name), where it goes (Where) and the
// text itself.
type RecruitLink struct {
	ID, Name, Where, Text string
	// Multiline: a document (MTurk's XML) rather than a link.
	Multiline bool
}

// MTurkFrameHeight is the height, in pixels, of the frame MTurk shows the
// study in: a question fits 900.
const MTurkFrameHeight = 900

// ProlificURLParams are the link parameters Prolific fills in for each
// participant, written as Prolific's study URL takes them ({{%NAME%}} is
// Prolific's syntax for the value it substitutes).
const ProlificURLParams = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"

// RecruitLinks returns what to paste into the study's platform, built on
// the study's public link: on Prolific the study URL with Prolific's
// URL parameters and the completion code to enter there; on MTurk the
// ExternalQuestion of the HIT; on a generic platform the link with the
// platform's id parameter; without a platform the link itself.
func (p Platform) RecruitLinks(publicURL string) []RecruitLink {
	join := func(params string) string {
		if strings.Contains(publicURL, "?") {
			return publicURL + "&" + params
		}
		return publicURL + "?" + params
	}
	switch p.Kind {
	case PlatformProlific:
		links := []RecruitLink{{ID: "prolific-url", Name: "Study URL", Where: "Prolific → your study → Study link (\"I'll use URL parameters\")",
			Text: join(ProlificURLParams)}}
		if p.CompletionCode != "" {
			links = append(links, RecruitLink{ID: "prolific-code", Name: "Completion code",
				Where: "Prolific → your study → Completion paths (closer sends participants to " + p.ReturnLink(p.CompletionCode, "") + ")",
				Text:  p.CompletionCode})
		}
		return links
	case PlatformMTurk:
		var esc strings.Builder
		_ = xml.EscapeText(&esc, []byte(publicURL)) // writes to memory
		doc := `<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">` + "\n" +
			"  <ExternalURL>" + esc.String() + "</ExternalURL>\n" +
			"  <FrameHeight>" + strconv.Itoa(MTurkFrameHeight) + "</FrameHeight>\n" +
			"</ExternalQuestion>"
		return []RecruitLink{{ID: "mturk-xml", Name: "ExternalQuestion", Where: "MTurk → create the HIT with this as its Question (try the sandbox first)",
			Text: doc, Multiline: true}}
	case PlatformGeneric:
		return []RecruitLink{{ID: "generic-url", Name: "Study link", Where: "your platform: replace PARTICIPANT_ID by each participant's id",
			Text: join(url.QueryEscape(p.IDParam) + "=PARTICIPANT_ID")}}
	}
	return []RecruitLink{{ID: "public-url", Name: "Study link", Where: "anyone with it can take part (e-mail, a course page, the QR code below)",
		Text: publicURL}}
}
