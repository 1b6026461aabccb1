package collect

import (
	"errors"

	"github.com/closer-lab/closer/internal/triplet"
)

// Comparison is a question before it is issued: which of Left and Right is
// closer to Anchor. Left and Right are in display order.
type Comparison struct {
	Anchor, Left, Right int
	// Design is recorded as the question's design; empty means the study's
	// design (a design study records its random fallbacks as DesignFallback).
	Design string
}

// Key returns the comparison's unordered key.
func (c Comparison) Key() triplet.Key { return triplet.QuestionKey(c.Anchor, c.Left, c.Right) }

// ErrExhausted means nothing is left to ask a participant; the participant
// is then done.
var ErrExhausted = errors.New("no comparison left to ask this participant")
