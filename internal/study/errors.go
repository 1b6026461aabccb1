package study

import "fmt"

// Kind classifies the errors a caller should show to the user.
type Kind int

// The kinds of user-facing errors.
const (
	KindNotFound  Kind = iota + 1 // no such study, question, ...
	KindInvalid                   // input that breaks a rule (422)
	KindForbidden                 // not yours
	KindConflict                  // clashes with what is stored
	KindNotOpen                   // the study does not take this now
	KindFull                      // the study admits no more participants (its quota)
	KindUnauthorized
	KindUnavailable // the database cannot be reached or has no free connection (503)
)

// Error is an error whose message is meant for the user.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// NotFound is the error for a missing what ("study", "question", ...).
func NotFound(what string) error {
	return &Error{Kind: KindNotFound, Msg: what + " not found"}
}
