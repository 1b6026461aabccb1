package landmark

import (
	"encoding/json"
	"fmt"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Random is the random design as a state machine: every comparison is
// always open, Open offers uniformly random questions (anchor; j, k) of
// three distinct items, any valid answer is accepted, and it is never done.
// Its state is the seed and the number of answers recorded: the i-th
// question offered after r answers is a function of (seed, r + i), so the
// design is deterministic and its state is a few bytes.
type Random struct {
	n        int
	seed     uint64
	answered int
}

var _ design.Design = (*Random)(nil)

// NewRandom returns the random design over n >= 3 items.
func NewRandom(n int, seed uint64) (*Random, error) {
	if n < 3 {
		return nil, fmt.Errorf("landmark: random design needs at least 3 items, have %d", n)
	}
	return &Random{n: n, seed: seed}, nil
}

// N returns the number of items.
func (r *Random) N() int { return r.n }

// Answered returns the number of answers recorded.
func (r *Random) Answered() int { return r.answered }

// Open appends limit random questions to dst (one when limit <= 0: the
// open set of the random design is every comparison, which is too many to
// list). Each wants one answer. Calls without a Record in between return
// the same questions.
func (r *Random) Open(dst []design.Need, limit int) []design.Need {
	if limit <= 0 {
		limit = 1
	}
	for i := range limit {
		rng := triplet.NewRand(triplet.Mix64(triplet.Mix64(r.seed^0x72616e646f6d) + uint64(r.answered+i))) // "random"
		a, j, k := triplet.RandomQuestion(rng, r.n)
		dst = append(dst, design.Need{Key: triplet.KeyOf(triplet.Triplet{Anchor: a, Closer: j, Farther: k}), Answers: 1})
	}
	return dst
}

// Record accepts any valid answer: every comparison is open in the random
// design.
func (r *Random) Record(t triplet.Triplet) bool {
	if t.Valid(r.n) != nil {
		return false
	}
	r.answered++
	return true
}

// Done is always false: random questions never run out.
func (r *Random) Done() bool { return false }

type randomState struct {
	Kind     string `json:"kind"`
	Version  int    `json:"version"`
	N        int    `json:"n"`
	Seed     uint64 `json:"seed"`
	Answered int    `json:"answered"`
}

// MarshalState serialises the design (JSON); RestoreRandom reads it back.
func (r *Random) MarshalState() ([]byte, error) {
	return json.Marshal(randomState{Kind: "random", Version: 1, N: r.n, Seed: r.seed, Answered: r.answered})
}

// RestoreRandom rebuilds a random design from MarshalState's output.
func RestoreRandom(data []byte) (*Random, error) {
	var s randomState
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("landmark: restore random design: %w", err)
	}
	if s.Kind != "random" || s.Version != 1 {
		return nil, fmt.Errorf("landmark: restore random design: state of kind %q version %d, want \"random\" version 1", s.Kind, s.Version)
	}
	if s.Answered < 0 {
		return nil, fmt.Errorf("landmark: restore random design: negative answer count %d", s.Answered)
	}
	r, err := NewRandom(s.N, s.Seed)
	if err != nil {
		return nil, fmt.Errorf("landmark: restore random design: %w", err)
	}
	r.answered = s.Answered
	return r, nil
}
