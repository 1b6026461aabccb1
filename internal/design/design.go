// Package design holds what every question design shares: the comparisons a
// design has open, and the state-machine contract that the store (in
// production) and the simulator (offline) both drive. Designs themselves
// live in internal/landmark and internal/basis.
package design

import "github.com/closer-lab/closer/internal/triplet"

// Need is one comparison open to ask now: the question (anchor; j, k) with
// j < k, and how many more answers the design wants for it.
type Need struct {
	Key     triplet.Key
	Answers int
}

// Design is a question design as a pure state machine. It is deterministic:
// the same seed and the same sequence of recorded answers give the same
// state, so a store may persist it as a snapshot (MarshalState) or rebuild
// it by replaying the answers it recorded, and a simulator drives exactly
// the code that runs in production.
type Design interface {
	// Open appends to dst the comparisons that can be asked now, at most
	// limit of them (all when limit <= 0), most wanted first.
	Open(dst []Need, limit int) []Need
	// Record advances the state with one answer. It reports whether the
	// answer was to a comparison the design had open; answers to anything
	// else (random fallback questions, surplus repeats) leave it unchanged.
	Record(t triplet.Triplet) bool
	// Done reports whether the design has nothing more to ask, ever.
	Done() bool
	// MarshalState serialises the state (JSON); the design's package has
	// the matching constructor that restores it.
	MarshalState() ([]byte, error)
}
