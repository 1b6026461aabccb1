package collect

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

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

// Ask is what a scheduler knows when it picks a participant's next question.
type Ask struct {
	Study         Study
	ParticipantID int64
	Items         int // n: items are 0..n-1
}

// ErrExhausted is returned by a Scheduler with nothing left to ask the
// participant; the participant is then done.
var ErrExhausted = errors.New("no comparison left to ask this participant")

// A Scheduler is a question design as the store drives it. Next picks the
// next comparison for a participant inside the transaction that issues it
// (the participant's row is locked); Record sees every answer inside the
// transaction that stores it, so a design's persisted state advances
// atomically with the answers. The store guarantees that a participant is
// never issued the same comparison twice (a unique index), so Next must not
// return one the participant was already asked.
type Scheduler interface {
	Next(ctx context.Context, tx pgx.Tx, ask Ask) (Comparison, error)
	Record(ctx context.Context, tx pgx.Tx, study Study, t triplet.Triplet) error
}
