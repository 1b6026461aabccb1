// Package simulate drives any question design (design.Design) against a
// simulated crowd: a noisy oracle over known points and m annotators who
// answer at the same time. It runs exactly the state machines that the web
// app runs, so a design proven here is the design that runs in production,
// and it lets researchers plan budgets before a study opens.
//
// Concurrency is simulated deterministically, in rounds: in each round the
// design's open comparisons are leased to up to m annotators (a comparison
// that wants r more answers goes to at most r of them, each annotator gets
// one question; every open comparison gets one annotator before any gets a
// second), every leased question is answered by the oracle, and the
// answers are recorded with the design in annotator order before the next
// round opens. Annotators left without a design question (the design has
// fewer than m open, or is done) get a uniformly random question instead:
// a fallback, kept with the collected triplets but not recorded with the
// design, exactly like the store's random fallback.
//
// Designs that choose questions from a fitted embedding (the active
// design, a Refresher) run with a Worker (RunWithWorker): between rounds it
// refits the embedding of all answers and refreshes the design's pool of
// scored questions, as the web app's worker does beside the requests.
//
// Annotators are anonymous: every answer is an independent draw of the
// oracle, so "never the same comparison twice to one participant" (the
// store's rule) is not modelled.
package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Coordinator is implemented by designs that place the items themselves
// (the adaptive basis design): DHat is the estimated dimension and
// Coordinates the current coordinates, n × DHat, or nil while the design
// cannot place the items yet.
type Coordinator interface {
	DHat() int
	Coordinates() *mat.Dense
}

// Refresher is implemented by designs that choose their questions from a
// fitted embedding (the active design): once WarmedUp, a worker fits the
// answers and hands the fit to Refresh, which rescores the design's pool.
type Refresher interface {
	WarmedUp() bool
	Refresh(x *mat.Dense, answers []triplet.Triplet) error
}

// Worker stands in for the web app's worker for a Refresher design: it
// refits the embedding of all answers so far and refreshes the design,
// first as soon as the warm-up is over, then every Every answers. A fit
// happens between rounds, as the app's worker runs beside the requests.
type Worker struct {
	// Every is the number of answers between fits (at least 1).
	Every int
	// Fit embeds the answers; prev is the previous fit (nil the first
	// time), for a warm start.
	Fit func(ctx context.Context, answers []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error)
}

// Crowd is the simulated crowd.
type Crowd struct {
	// Oracle answers the questions (Euclidean distances, wrong with its
	// probability P).
	Oracle *triplet.Oracle
	// Annotators is how many annotators answer at once (at least 1).
	Annotators int
	// Seed fixes the fallback questions.
	Seed uint64
}

// Checkpoint is the state of a run after some answers.
type Checkpoint struct {
	// Answers is the number of answers collected so far.
	Answers int
	// Fallbacks is how many of them answered random fallback questions.
	Fallbacks int
	// Triplets are all answers so far, in the order they were given.
	// Fallback[i] reports whether Triplets[i] answered a fallback question.
	// Both are shared with the run: read them, do not keep or modify them.
	Triplets []triplet.Triplet
	Fallback []bool
	// Design is the design being driven, in its state after Answers answers.
	Design design.Design
}

// FallbackShare returns Fallbacks / Answers (0 before any answer).
func (c Checkpoint) FallbackShare() float64 {
	if c.Answers == 0 {
		return 0
	}
	return float64(c.Fallbacks) / float64(c.Answers)
}

// DesignTriplets returns the answers that were not fallbacks, in order.
func (c Checkpoint) DesignTriplets() []triplet.Triplet {
	ts := make([]triplet.Triplet, 0, c.Answers-c.Fallbacks)
	for i, t := range c.Triplets {
		if !c.Fallback[i] {
			ts = append(ts, t)
		}
	}
	return ts
}

// Stats sums up a run.
type Stats struct {
	// Answers and Fallbacks as in Checkpoint; Rounds is the number of rounds.
	Answers, Fallbacks, Rounds int
	// Refused counts answers to design questions that the design's Record
	// did not accept (it should be 0: the driver only leases what is open).
	Refused int
	// MaxHanded is the largest number of times one comparison was handed
	// out as a design question over the whole run; with a landmark design
	// it is at most its repeats.
	MaxHanded int
	// Fits counts the worker's fits (RunWithWorker).
	Fits int
}

// Run drives d with the crowd until budget answers are collected, calling
// at for every checkpoint (a number of answers; the budget is always the
// last one). Checkpoints above the budget are ignored. Run stops early, with
// the error, when at or the context returns one.
func Run(ctx context.Context, d design.Design, crowd Crowd, budget int, checkpoints []int, at func(Checkpoint) error) (Stats, error) {
	return RunWithWorker(ctx, d, crowd, nil, budget, checkpoints, at)
}

// RunWithWorker is Run with a worker that refits the embedding for a
// Refresher design (nil: none, as Run). A design that is not a Refresher
// ignores the worker.
func RunWithWorker(ctx context.Context, d design.Design, crowd Crowd, worker *Worker, budget int, checkpoints []int, at func(Checkpoint) error) (Stats, error) {
	if crowd.Oracle == nil {
		panic("simulate: Run without an oracle")
	}
	n, _ := crowd.Oracle.X.Dims()
	if n < 3 {
		return Stats{}, fmt.Errorf("simulate: need at least 3 points, have %d", n)
	}
	if crowd.Annotators < 1 {
		return Stats{}, fmt.Errorf("simulate: need at least 1 annotator, have %d", crowd.Annotators)
	}
	if budget < 1 {
		return Stats{}, fmt.Errorf("simulate: budget %d, want at least 1", budget)
	}
	refresher, _ := d.(Refresher)
	if worker != nil && refresher != nil && (worker.Every < 1 || worker.Fit == nil) {
		return Stats{}, fmt.Errorf("simulate: worker refitting every %d answers, want at least 1 and a fit", worker.Every)
	}
	cps := normaliseCheckpoints(checkpoints, budget)
	rng := triplet.NewRand(crowd.Seed)
	m := crowd.Annotators

	var (
		st       Stats
		ts       = make([]triplet.Triplet, 0, budget)
		fallback = make([]bool, 0, budget)
		handed   = make(map[triplet.Key]int)
		open     []design.Need
		round    = make([]question, 0, m)
		fit      *mat.Dense
		fitAt    int
	)
	for st.Answers < budget {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if worker != nil && refresher != nil && refresher.WarmedUp() && (fit == nil || st.Answers-fitAt >= worker.Every) {
			x, err := worker.Fit(ctx, ts, fit)
			if err != nil {
				return st, fmt.Errorf("simulate: worker fit after %d answers: %w", st.Answers, err)
			}
			if err := refresher.Refresh(x, ts); err != nil {
				return st, fmt.Errorf("simulate: refresh after %d answers: %w", st.Answers, err)
			}
			fit, fitAt = x, st.Answers
			st.Fits++
		}
		st.Rounds++
		slots := min(m, budget-st.Answers)
		round = lease(round[:0], d, &open, slots, rng, n)
		for _, q := range round {
			if !q.fallback {
				handed[q.key]++
				st.MaxHanded = max(st.MaxHanded, handed[q.key])
			}
		}
		// Everybody answers, then the answers are recorded in order.
		for _, q := range round {
			t := crowd.Oracle.Answer(q.key.Anchor, q.key.J, q.key.K)
			if q.fallback {
				st.Fallbacks++
			} else if !d.Record(t) {
				st.Refused++
			}
			ts = append(ts, t)
			fallback = append(fallback, q.fallback)
			st.Answers++
			if len(cps) > 0 && st.Answers == cps[0] {
				cps = cps[1:]
				cp := Checkpoint{Answers: st.Answers, Fallbacks: st.Fallbacks, Triplets: ts, Fallback: fallback, Design: d}
				if err := at(cp); err != nil {
					return st, err
				}
			}
		}
	}
	return st, nil
}

type question struct {
	key      triplet.Key
	fallback bool
}

// lease hands out up to slots questions for one round: the design's open
// comparisons first, in the design's order, breadth first (every open
// comparison gets one annotator before any gets a second), a comparison to
// at most as many annotators as it wants answers; random fallback questions
// for the rest.
func lease(dst []question, d design.Design, open *[]design.Need, slots int, rng *rand.Rand, n int) []question {
	if !d.Done() {
		*open = d.Open((*open)[:0], slots)
		for pass := 0; len(dst) < slots; pass++ {
			leased := false
			for _, nd := range *open {
				if nd.Answers > pass && len(dst) < slots {
					dst = append(dst, question{key: nd.Key})
					leased = true
				}
			}
			if !leased {
				break
			}
		}
	}
	for len(dst) < slots {
		a, j, k := triplet.RandomQuestion(rng, n)
		dst = append(dst, question{key: triplet.KeyOf(triplet.Triplet{Anchor: a, Closer: j, Farther: k}), fallback: true})
	}
	return dst
}

// normaliseCheckpoints sorts, deduplicates and clips the checkpoints to
// 1..budget and makes sure the budget is the last one.
func normaliseCheckpoints(cps []int, budget int) []int {
	out := make([]int, 0, len(cps)+1)
	for _, c := range cps {
		if c >= 1 && c <= budget {
			out = append(out, c)
		}
	}
	out = append(out, budget)
	slices.Sort(out)
	return slices.Compact(out)
}

// Even returns k checkpoints evenly spaced up to budget: budget·i/k for
// i = 1..k (rounded down, duplicates removed).
func Even(budget, k int) []int {
	if k < 1 {
		k = 1
	}
	cps := make([]int, 0, k)
	for i := 1; i <= k; i++ {
		if c := budget * i / k; c >= 1 {
			cps = append(cps, c)
		}
	}
	return slices.Compact(cps)
}
