package study

import "time"

// Admin is a researcher's account.
type Admin struct {
	ID        int64
	Email     string
	CreatedAt time.Time
	// SiteAdmin: a site administrator, who manages accounts and holds
	// every study's owner rights; otherwise a researcher who sees only the
	// studies they hold a role on (issue 30).
	SiteAdmin bool
}

// MinPasswordLen is the shortest password accepted for an admin.
const MinPasswordLen = 8

// APIToken is an admin's bearer token for scripts. The secret itself is
// shown once, at creation; only its sha256 is stored.
type APIToken struct {
	ID         int64
	AdminID    int64
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	Scope      TokenScope
}

// TokenScope is what an API token may touch and do (issue 30), always
// within what its account may: AllStudies or the listed ones; Read results
// (the routes a viewer may use), Identifying data in exports (external
// ids, for an account that may see them), Write (the routes an editor
// may use; never an owner's: no token deletes a study or grants roles).
type TokenScope struct {
	AllStudies               bool
	Studies                  []int64
	Slugs                    []string // the listed studies' slugs, as ListAPITokens reads them
	Read, Identifying, Write bool
}

// FullScope is what a token made without a scope may do: all its account may.
var FullScope = TokenScope{AllStudies: true, Read: true, Identifying: true, Write: true}

// Covers reports whether the scope names the study.
func (t TokenScope) Covers(studyID int64) bool {
	if t.AllStudies {
		return true
	}
	for _, id := range t.Studies {
		if id == studyID {
			return true
		}
	}
	return false
}

// Session is an admin's browser session as the account page lists it. The
// user agent and address are the browser's at login, kept only as long as
// the session so that the admin can tell their sessions apart.
type Session struct {
	ID         int64
	CreatedAt  time.Time
	LastSeenAt time.Time // to the minute
	ExpiresAt  time.Time
	UserAgent  string
	Address    string
	Current    bool // the session of the request that listed them
}
