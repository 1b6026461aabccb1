package basis

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/closer-lab/closer/internal/triplet"
)

const stateVersion = 1

// snapshot is the JSON form of a Scheme. Derived data (rankings from the
// orders, the decided-answer table from the learned triplets, the waiting
// counts of partitions from the open comparisons, the coordinates) is
// rebuilt on Restore.
type snapshot struct {
	Version int    `json:"version"`
	N       int    `json:"n"`
	Config  Config `json:"config"`
	RNG     []byte `json:"rng"`
	Phase   string `json:"phase"`
	Stage   string `json:"stage,omitempty"`

	Z       int         `json:"z"`
	Pool    []int       `json:"pool,omitempty"`
	Matches []matchSnap `json:"matches,omitempty"`
	NextM   int         `json:"next_match"`

	Learned []int `json:"learned"` // anchor, closer, farther, ...
	// Open lists the open comparisons, each as anchor, j, k, answers for
	// j, answers for k, priority, sequence number, number of owners, then
	// job and partition of each owner (job -1: a tournament match).
	Open    []int  `json:"open"`
	Seq     uint64 `json:"seq"`
	Answers int    `json:"answers"`

	Jobs    []jobSnap   `json:"jobs,omitempty"`
	NextJob int         `json:"next_job"`
	Orders  []orderSnap `json:"orders,omitempty"`
	Sorts   int         `json:"sorts"`

	Ends     []int   `json:"ends,omitempty"`
	HullSet  []int   `json:"hull_set,omitempty"`
	Axes     [][]int `json:"axes,omitempty"`
	Cand     int     `json:"cand"`
	Finished bool    `json:"finished"`

	ExtraJobs    int `json:"extra_jobs"`
	ExtraDone    int `json:"extra_done"`
	ExtraDecided int `json:"extra_decided"`
}

type matchSnap struct {
	ID int    `json:"id"`
	P  [2]int `json:"p"`
}

type jobSnap struct {
	ID      int       `json:"id"`
	Head    int       `json:"head"`
	Extra   bool      `json:"extra,omitempty"`
	Items   []int     `json:"items"`
	Segs    []segSnap `json:"segs"`
	NextSeg int       `json:"next_seg"`
	Decided int       `json:"decided"`
}

type segSnap struct {
	ID    int `json:"id"`
	Lo    int `json:"lo"`
	Hi    int `json:"hi"`
	Pivot int `json:"pivot"`
}

type orderSnap struct {
	Head  int   `json:"head"`
	Order []int `json:"order"`
}

// MarshalState serialises the scheme as JSON; Restore rebuilds it.
func (s *Scheme) MarshalState() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("basis: marshal state: %w", err)
	}
	sn := snapshot{
		Version: stateVersion, N: s.n, Config: s.cfg, RNG: rng, Phase: s.phase, Stage: s.stage,
		Z: s.z, Pool: s.pool, NextM: s.nextM,
		Seq: s.seq, Answers: s.answers, NextJob: s.nextJob, Sorts: s.sorts,
		Ends: s.ends, HullSet: s.hullSet, Axes: s.axes, Cand: s.cand, Finished: s.finished,
		ExtraJobs: s.extraJobs, ExtraDone: s.extraDone, ExtraDecided: s.extraDecided,
		Learned: make([]int, 0, 3*len(s.learned)),
	}
	for _, id := range sortedKeys(s.matches) {
		sn.Matches = append(sn.Matches, matchSnap{id, s.matches[id]})
	}
	for _, t := range s.learned {
		sn.Learned = append(sn.Learned, t.Anchor, t.Closer, t.Farther)
	}
	s.tidy()
	sn.Open = make([]int, 0, 10*len(s.live))
	for _, e := range s.live {
		sn.Open = append(sn.Open, e.key.Anchor, e.key.J, e.key.K, e.jc, e.kc, e.prio, int(e.seq), len(e.owners))
		for _, o := range e.owners {
			sn.Open = append(sn.Open, o.Job, o.Seg)
		}
	}
	for _, id := range s.jobIDs() {
		j := s.jobs[id]
		js := jobSnap{ID: j.ID, Head: j.Head, Extra: j.Extra, Items: j.Items, NextSeg: j.NextSeg, Decided: j.Decided}
		for _, sid := range sortedKeys(j.Segs) {
			sg := j.Segs[sid]
			js.Segs = append(js.Segs, segSnap{sid, sg.Lo, sg.Hi, sg.Pivot})
		}
		sn.Jobs = append(sn.Jobs, js)
	}
	for _, h := range sortedKeys(s.orders) {
		sn.Orders = append(sn.Orders, orderSnap{h, s.orders[h]})
	}
	b, err := json.Marshal(sn)
	if err != nil {
		return nil, fmt.Errorf("basis: marshal state: %w", err)
	}
	return b, nil
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Restore rebuilds a scheme from MarshalState's JSON. It checks the state
// for consistency and returns an error naming what is wrong.
func Restore(data []byte) (*Scheme, error) {
	var sn snapshot
	if err := json.Unmarshal(data, &sn); err != nil {
		return nil, fmt.Errorf("basis: restore: %w", err)
	}
	if sn.Version != stateVersion {
		return nil, fmt.Errorf("basis: restore: state version %d, want %d", sn.Version, stateVersion)
	}
	if sn.N < 3 {
		return nil, fmt.Errorf("basis: restore: %d items, need at least 3", sn.N)
	}
	if err := sn.Config.Validate(); err != nil {
		return nil, fmt.Errorf("basis: restore: %w", err)
	}
	switch sn.Phase {
	case PhaseFarthest, PhaseSort, PhaseExtra, PhaseDone:
	default:
		return nil, fmt.Errorf("basis: restore: unknown phase %q", sn.Phase)
	}
	n := sn.N
	s := newEmpty(n, sn.Config)
	s.pcg = &rand.PCG{}
	if err := s.pcg.UnmarshalBinary(sn.RNG); err != nil {
		return nil, fmt.Errorf("basis: restore: random state: %w", err)
	}
	s.rng = rand.New(s.pcg)
	s.phase, s.stage = sn.Phase, sn.Stage
	s.z, s.pool, s.nextM = sn.Z, sn.Pool, sn.NextM
	s.seq, s.answers, s.nextJob, s.sorts = sn.Seq, sn.Answers, sn.NextJob, sn.Sorts
	s.ends, s.hullSet, s.axes, s.cand, s.finished = sn.Ends, sn.HullSet, sn.Axes, sn.Cand, sn.Finished
	s.extraJobs, s.extraDone, s.extraDecided = sn.ExtraJobs, sn.ExtraDone, sn.ExtraDecided

	item := func(what string, v int) error {
		if v < 0 || v >= n {
			return fmt.Errorf("basis: restore: %s %d outside 0..%d", what, v, n-1)
		}
		return nil
	}
	for _, m := range sn.Matches {
		if err := errors2(item("match player", m.P[0]), item("match player", m.P[1])); err != nil {
			return nil, err
		}
		s.matches[m.ID] = m.P
	}
	if len(sn.Learned)%3 != 0 {
		return nil, fmt.Errorf("basis: restore: learned triplets not a multiple of 3 numbers")
	}
	s.learned = make([]triplet.Triplet, 0, len(sn.Learned)/3)
	for i := 0; i < len(sn.Learned); i += 3 {
		t := triplet.Triplet{Anchor: sn.Learned[i], Closer: sn.Learned[i+1], Farther: sn.Learned[i+2]}
		if err := t.Valid(n); err != nil {
			return nil, fmt.Errorf("basis: restore: learned %w", err)
		}
		s.learned = append(s.learned, t)
		k := triplet.KeyOf(t)
		s.known[k] = t.Closer == k.J
	}
	for _, o := range sn.Orders {
		if err := item("sorted head", o.Head); err != nil {
			return nil, err
		}
		if len(o.Order) != n || o.Order[0] != o.Head {
			return nil, fmt.Errorf("basis: restore: order of head %d malformed", o.Head)
		}
		seen := make([]bool, n)
		for _, x := range o.Order {
			if x < 0 || x >= n || seen[x] {
				return nil, fmt.Errorf("basis: restore: order of head %d is not a permutation", o.Head)
			}
			seen[x] = true
		}
		s.setOrder(o.Head, o.Order)
	}
	for _, js := range sn.Jobs {
		if err := item("job head", js.Head); err != nil {
			return nil, err
		}
		j := &sortJob{ID: js.ID, Head: js.Head, Extra: js.Extra, Items: js.Items, Segs: make(map[int]*segment),
			NextSeg: js.NextSeg, Decided: js.Decided}
		for _, x := range js.Items {
			if err := item("job item", x); err != nil {
				return nil, err
			}
		}
		for _, g := range js.Segs {
			if g.Lo < 0 || g.Hi > len(js.Items) || g.Hi-g.Lo < 2 || !slices.Contains(js.Items[g.Lo:g.Hi], g.Pivot) {
				return nil, fmt.Errorf("basis: restore: job %d partition %d malformed", js.ID, g.ID)
			}
			j.Segs[g.ID] = &segment{Lo: g.Lo, Hi: g.Hi, Pivot: g.Pivot}
		}
		j.Live = len(j.Segs)
		s.jobs[j.ID] = j
	}
	for o := sn.Open; len(o) > 0; {
		if len(o) < 8 || o[7] < 1 || len(o) < 8+2*o[7] {
			return nil, fmt.Errorf("basis: restore: open comparisons truncated")
		}
		k := triplet.Key{Anchor: o[0], J: o[1], K: o[2]}
		if (triplet.Triplet{Anchor: k.Anchor, Closer: k.J, Farther: k.K}).Valid(n) != nil || k.J >= k.K || o[3] < 0 || o[4] < 0 || o[6] < 0 {
			return nil, fmt.Errorf("basis: restore: open comparison %v malformed", o[:7])
		}
		if _, dup := s.open[k]; dup {
			return nil, fmt.Errorf("basis: restore: open comparison %v listed twice", k)
		}
		e := &openEntry{key: k, jc: o[3], kc: o[4], prio: o[5], seq: uint64(o[6])}
		if e.jc+e.kc >= s.cfg.repeats() {
			return nil, fmt.Errorf("basis: restore: open comparison %v already has %d answers", k, e.jc+e.kc)
		}
		for i := range o[7] {
			ow := owner{Job: o[8+2*i], Seg: o[9+2*i]}
			switch ow.Job {
			case ownerMatch:
				if _, ok := s.matches[ow.Seg]; !ok {
					return nil, fmt.Errorf("basis: restore: open comparison %v for unknown match %d", k, ow.Seg)
				}
			default:
				j := s.jobs[ow.Job]
				if j == nil || j.Segs[ow.Seg] == nil {
					return nil, fmt.Errorf("basis: restore: open comparison %v for unknown partition %d/%d", k, ow.Job, ow.Seg)
				}
				j.Segs[ow.Seg].wait++
			}
			e.owners = append(e.owners, ow)
		}
		o = o[8+2*o[7]:]
		s.open[k] = e
		s.fresh = append(s.fresh, e)
	}
	for _, j := range s.jobs {
		for id, g := range j.Segs {
			if g.wait == 0 {
				return nil, fmt.Errorf("basis: restore: job %d partition %d waits for nothing", j.ID, id)
			}
		}
	}
	// The item lists a hand-edited state could get wrong: each names items,
	// and a finished state's axes are read through their endpoints' orders.
	lists := []struct {
		what  string
		items []int
	}{{"pool item", sn.Pool}, {"end", sn.Ends}, {"hull point", sn.HullSet}}
	for _, axis := range sn.Axes {
		if len(axis) == 0 {
			return nil, fmt.Errorf("basis: restore: an axis is empty")
		}
		lists = append(lists, struct {
			what  string
			items []int
		}{"axis point", axis})
	}
	for _, l := range lists {
		for _, x := range l.items {
			if err := item(l.what, x); err != nil {
				return nil, err
			}
		}
	}
	if s.finished {
		for _, axis := range sn.Axes {
			for _, end := range []int{axis[0], axis[len(axis)-1]} {
				if s.ranks[end] == nil {
					return nil, fmt.Errorf("basis: restore: axis end %d has no sorted order", end)
				}
			}
		}
		s.coords = s.embed()
	}
	return s, nil
}

func errors2(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
