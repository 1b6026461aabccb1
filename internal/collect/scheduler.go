package collect

import (
	"errors"
)

// ErrExhausted means nothing is left to ask a participant; the participant
// is then done.
var ErrExhausted = errors.New("no comparison left to ask this participant")
