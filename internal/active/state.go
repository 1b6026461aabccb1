package active

import (
	"encoding/json"
	"fmt"

	"github.com/closer-lab/closer/internal/triplet"
)

// state is the serialised form of a Design: the settings, the counters
// and the pool (a few dozen bytes per pool question).
type state struct {
	Kind      string       `json:"kind"`
	Version   int          `json:"version"`
	N         int          `json:"n"`
	Config    configState  `json:"config"`
	Answered  int          `json:"answered"`
	Refreshes int          `json:"refreshes"`
	Next      int          `json:"next"`
	Pool      [][5]float64 `json:"pool"` // anchor, j, k, answers still wanted, score
}

type configState struct {
	Seed          uint64  `json:"seed"`
	WarmupPerItem int     `json:"warmup_per_item"`
	Pool          int     `json:"pool"`
	Repeats       int     `json:"repeats"`
	Model         Model   `json:"model,omitempty"`
	Alpha         float64 `json:"alpha,omitempty"`
	Mu            float64 `json:"mu,omitempty"`
	Rule          Rule    `json:"rule,omitempty"`
	Candidates    int     `json:"candidates,omitempty"`
	PosteriorMass float64 `json:"posterior_mass,omitempty"`
	MaxSupport    int     `json:"max_support,omitempty"`
}

const stateKind = "active"

// MarshalState serialises the design (JSON); Restore reads it back.
func (d *Design) MarshalState() ([]byte, error) {
	c := d.cfg
	s := state{
		Kind: stateKind, Version: 1, N: d.n,
		Config: configState{Seed: c.Seed, WarmupPerItem: c.WarmupPerItem, Pool: c.Pool, Repeats: c.Repeats,
			Model: c.Score.Model, Alpha: c.Score.Alpha, Mu: c.Score.Mu, Rule: c.Score.Rule,
			Candidates: c.Score.Candidates, PosteriorMass: c.Score.PosteriorMass, MaxSupport: c.Score.MaxSupport},
		Answered: d.answered, Refreshes: d.refreshes, Next: d.next,
		Pool: make([][5]float64, len(d.pool)),
	}
	for i, e := range d.pool {
		s.Pool[i] = [5]float64{float64(e.key.Anchor), float64(e.key.J), float64(e.key.K), float64(e.left), e.score}
	}
	return json.Marshal(s)
}

// Restore rebuilds a design from MarshalState's output. The restored design
// behaves exactly as the one that was saved.
func Restore(data []byte) (*Design, error) {
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("active: restore: %w", err)
	}
	if s.Kind != stateKind || s.Version != 1 {
		return nil, fmt.Errorf("active: restore: state of kind %q version %d, want %q version 1", s.Kind, s.Version, stateKind)
	}
	c := s.Config
	d, err := New(s.N, Config{Seed: c.Seed, WarmupPerItem: c.WarmupPerItem, Pool: c.Pool, Repeats: c.Repeats,
		Score: ScoreConfig{Model: c.Model, Alpha: c.Alpha, Mu: c.Mu, Rule: c.Rule, Candidates: c.Candidates,
			PosteriorMass: c.PosteriorMass, MaxSupport: c.MaxSupport}})
	if err != nil {
		return nil, fmt.Errorf("active: restore: %w", err)
	}
	switch {
	case s.Answered < 0 || s.Refreshes < 0:
		return nil, fmt.Errorf("active: restore: negative counts (answered %d, refreshes %d)", s.Answered, s.Refreshes)
	case s.Next < 0 || s.Next >= s.N:
		return nil, fmt.Errorf("active: restore: next head %d outside 0..%d", s.Next, s.N-1)
	case len(s.Pool) > d.cfg.Pool:
		return nil, fmt.Errorf("active: restore: pool of %d questions, more than its size %d", len(s.Pool), d.cfg.Pool)
	}
	d.answered, d.refreshes, d.next = s.Answered, s.Refreshes, s.Next
	qs := make([]Question, len(s.Pool))
	lefts := make([]int, len(s.Pool))
	for i, e := range s.Pool {
		a, j, k, left := int(e[0]), int(e[1]), int(e[2]), int(e[3])
		if float64(a) != e[0] || float64(j) != e[1] || float64(k) != e[2] || float64(left) != e[3] {
			return nil, fmt.Errorf("active: restore: pool question %d has a fractional item or count", i)
		}
		if err := (triplet.Triplet{Anchor: a, Closer: j, Farther: k}).Valid(s.N); err != nil || j >= k {
			return nil, fmt.Errorf("active: restore: pool question %d (%d; %d, %d) is not a question over %d items", i, a, j, k, s.N)
		}
		if left < 0 || left > d.cfg.Repeats {
			return nil, fmt.Errorf("active: restore: pool question %d wants %d answers, repeats %d", i, left, d.cfg.Repeats)
		}
		qs[i], lefts[i] = Question{Key: triplet.Key{Anchor: a, J: j, K: k}, Score: e[4]}, left
	}
	d.setPool(qs)
	if len(d.pool) != len(qs) {
		return nil, fmt.Errorf("active: restore: the pool repeats a question")
	}
	for i := range d.pool {
		d.pool[i].left = lefts[i]
	}
	return d, nil
}
