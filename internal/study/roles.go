package study

import "time"

// Role is what an account may do in one study (issue 30). The roles are
// ordered: each may do what the ones below it may.
type Role int

// The roles, from none to owner. A site administrator holds RoleOwner in
// every study.
const (
	RoleNone   Role = iota // sees nothing of the study: it is not found
	RoleViewer             // the study page, the dashboard, exports without identifying columns
	RoleEditor             // settings, items, opening and closing, exclusions, recompute, every export
	RoleOwner              // everything, deleting the study and granting roles
)

// String is the role's stored name ("" for RoleNone).
func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleEditor:
		return "editor"
	case RoleOwner:
		return "owner"
	}
	return ""
}

// ParseRole reads a stored or typed role name.
func ParseRole(s string) (Role, error) {
	switch s {
	case "viewer":
		return RoleViewer, nil
	case "editor":
		return RoleEditor, nil
	case "owner":
		return RoleOwner, nil
	}
	return RoleNone, Errorf(KindInvalid, "%q is not a role (owner, editor or viewer)", s)
}

// Member is an account holding a role in a study.
type Member struct {
	AdminID   int64
	Email     string
	Role      Role
	GrantedAt time.Time
}

// Invitation is an owner's invitation of someone without an account to a
// role in a study (issue 30): the link's secret is shown once, its hash
// stored; it is used once, before ExpiresAt.
type Invitation struct {
	ID        int64
	Email     string
	StudyID   int64
	Role      Role
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// InvitationTTL is how long an invitation link works.
const InvitationTTL = 7 * 24 * time.Hour

// Erasure is what deleting a participant at a data-rights request removes
// from one study (issue 30): their rows, and how their answers had
// reached the results and the design.
type Erasure struct {
	StudyID       int64
	StudySlug     string
	StudyTitle    string
	Participants  int
	Questions     int // questions issued to them (answered or not)
	Answers       int // their stored answers (triplets)
	TrialAnswers  int // catch and repeat trials
	Votes         int // answers counted in the study's votes, taken out again
	DesignAnswers int // answers a design learned from; its state keeps what it learned
}
