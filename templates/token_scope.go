package templates

import (
	"strings"

	"github.com/closer-lab/closer/internal/study"
)

// tokenStudies is the account page's text for a token's studies.
func tokenStudies(sc study.TokenScope) string {
	if sc.AllStudies {
		return "all yours"
	}
	if len(sc.Slugs) == 0 {
		return "none left"
	}
	return strings.Join(sc.Slugs, ", ")
}

// tokenRights is the account page's text for a token's rights.
func tokenRights(sc study.TokenScope) string {
	var r []string
	if sc.Read {
		r = append(r, "read")
	}
	if sc.Identifying {
		r = append(r, "identifying data")
	}
	if sc.Write {
		r = append(r, "write")
	}
	return strings.Join(r, ", ")
}
