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
// Several designs can run at once on one crowd (RunArms): each annotator
// is assigned to one arm when they start, by the arms' shares, answers a
// set number of questions, and a share of every annotator's questions are
// held out, random comparisons kept out of every arm's design and fit,
// the arms' common test set. Run is RunArms with one arm.
//
// Every answer is an independent draw of the oracle, so "never the same
// comparison twice to one participant" (the store's rule) is not modelled.
package simulate

import (
	"context"
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
// ignores the worker. It is RunArms with one arm, annotators who answer to
// the end and nothing held out.
func RunWithWorker(ctx context.Context, d design.Design, crowd Crowd, worker *Worker, budget int, checkpoints []int, at func(Checkpoint) error) (Stats, error) {
	arms := []Arm{{Name: "design", Share: 1, Design: d, Worker: worker}}
	ss, err := RunArms(ctx, arms, crowd, Study{}, budget, checkpoints, func(cp StudyCheckpoint) error {
		return at(cp.Arms[0].Checkpoint)
	})
	st := Stats{}
	if len(ss.Arms) == 1 {
		st = ss.Arms[0].Stats
	}
	st.Rounds = ss.Rounds
	return st, err
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
