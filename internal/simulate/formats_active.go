package simulate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/trialactive"
	"github.com/closer-lab/closer/internal/triplet"
)

// OddRun is a simulated odd-one-out study with one annotator at a time:
// random trials, or (Active) random trials for a warm-up and then the
// trials trialactive.Choose finds most uncertain under the native fit of the
// answers so far, refitted every RefitEvery answers as the app's worker
// would.
type OddRun struct {
	Oracle *TrialOracle
	Active bool
	// WarmupPerItem is the random trials per item before the active
	// choice starts (default 5: 5n trials).
	WarmupPerItem int
	// RefitEvery is the number of trials between fits, each the batch the
	// chooser picks at once (default n).
	RefitEvery int
	// Candidates is the random triples scored per trial chosen (default
	// 20; a batch of RefitEvery trials scores 20·RefitEvery).
	Candidates int
	// Fit configures the worker's native fits (warm-started from the
	// previous fit).
	Fit embed.Options
	// Seed fixes the random trials and candidates.
	Seed uint64
}

// OddCheckpoint is the state of an odd-one-out run after some trials.
type OddCheckpoint struct {
	// Trials are the answers so far, shared with the run: read only.
	Trials []trial.OddOneOut
	// Fits counts the worker's fits so far.
	Fits int
}

// RunOddOneOut drives r until budget trials are answered, calling at for
// every checkpoint (a number of trials; the budget is always the last).
func RunOddOneOut(ctx context.Context, r OddRun, budget int, checkpoints []int, at func(OddCheckpoint) error) error {
	n, _ := r.Oracle.X.Dims()
	if n < 3 || budget < 1 {
		return errors.New("simulate: an odd-one-out run needs 3 items and a budget")
	}
	if r.WarmupPerItem <= 0 {
		r.WarmupPerItem = 5
	}
	if r.RefitEvery <= 0 {
		r.RefitEvery = n
	}
	if r.Candidates <= 0 {
		r.Candidates = 20
	}
	alpha := embed.NativeAlpha(r.Fit)
	if math.IsNaN(alpha) {
		return fmt.Errorf("simulate: the odd-one-out worker fits natively with t-STE's kernel, not %s", r.Fit.Method)
	}
	rng := triplet.NewRand(r.Seed)
	cps := normaliseCheckpoints(checkpoints, budget)
	trials := make([]trial.OddOneOut, 0, budget)
	var batch [][3]int
	var prev *mat.Dense
	fits := 0
	for len(trials) < budget {
		if err := ctx.Err(); err != nil {
			return err
		}
		var items [3]int
		switch {
		case !r.Active || len(trials) < r.WarmupPerItem*n:
			a, b, c := triplet.RandomQuestion(rng, n)
			items = [3]int{a, b, c}
		default:
			if len(batch) == 0 {
				opt := r.Fit
				opt.Init = prev
				opt.Seed = r.Seed + uint64(fits)
				res, err := embed.FitOddOneOut(ctx, n, trials, opt)
				if err != nil {
					return err
				}
				prev = res.X
				fits++
				m := min(r.RefitEvery, budget-len(trials))
				batch = trialactive.Choose(batch[:0], rng, prev, alpha, m, r.Candidates*m)
			}
			items, batch = batch[0], batch[1:]
		}
		trials = append(trials, r.Oracle.OddOneOut(items))
		if len(cps) > 0 && len(trials) == cps[0] {
			cps = cps[1:]
			if err := at(OddCheckpoint{Trials: trials, Fits: fits}); err != nil {
				return err
			}
		}
	}
	return nil
}

// RankRun is a simulated rank study with one annotator at a time: random
// trials, or (Active) random trials for a warm-up and then, for queries
// taken in turn from a shuffled order of the items, the references
// trialactive.ChooseRank finds most uncertain under the native fit of the
// answers so far, refitted every RefitEvery answers.
type RankRun struct {
	Oracle *TrialOracle
	Spec   trial.RankSpec
	Active bool
	// WarmupPerItem is the random trials per item before the active
	// choice starts (default 1: n trials, 13n derived triplets for
	// 8-choose-2).
	WarmupPerItem int
	// RefitEvery is the number of trials between fits (default n/2, at
	// least 1).
	RefitEvery int
	// Candidates is the random reference sets scored per trial (default
	// 50).
	Candidates int
	// Fit configures the worker's native fits (warm-started).
	Fit embed.Options
	// Seed fixes the random trials, queries and candidates.
	Seed uint64
}

// RunRank drives r until budget trials are answered, calling at with the
// trials so far and the fits made at every checkpoint (the budget is
// always the last).
func RunRank(ctx context.Context, r RankRun, budget int, checkpoints []int, at func(trials []trial.Rank, fits int) error) error {
	n, _ := r.Oracle.X.Dims()
	if err := r.Spec.Validate(); err != nil {
		return err
	}
	if n <= r.Spec.N || budget < 1 {
		return fmt.Errorf("simulate: a %s run needs more than %d items and a budget", r.Spec, r.Spec.N)
	}
	if r.WarmupPerItem <= 0 {
		r.WarmupPerItem = 1
	}
	if r.RefitEvery <= 0 {
		r.RefitEvery = max(1, n/2)
	}
	if r.Candidates <= 0 {
		r.Candidates = 50
	}
	alpha := embed.NativeAlpha(r.Fit)
	if math.IsNaN(alpha) {
		return fmt.Errorf("simulate: the rank worker fits natively with t-STE's kernel, not %s", r.Fit.Method)
	}
	rng := triplet.NewRand(r.Seed)
	cps := normaliseCheckpoints(checkpoints, budget)
	trials := make([]trial.Rank, 0, budget)
	order := rng.Perm(n)
	var x *mat.Dense
	fits, sinceFit, next := 0, 0, 0
	for len(trials) < budget {
		if err := ctx.Err(); err != nil {
			return err
		}
		var t trial.Rank
		if !r.Active || len(trials) < r.WarmupPerItem*n {
			t = RandomRank(rng, r.Oracle, r.Spec, 1)[0]
		} else {
			if x == nil || sinceFit >= r.RefitEvery {
				opt := r.Fit
				opt.Init = x
				opt.Seed = r.Seed + uint64(fits)
				res, err := embed.FitRank(ctx, n, trials, opt)
				if err != nil {
					return err
				}
				x = res.X
				fits++
				sinceFit = 0
			}
			q := order[next%n]
			next++
			opts := trialactive.ChooseRank(rng, x, alpha, q, r.Spec.N, r.Candidates)
			t = r.Oracle.Rank(q, opts, r.Spec.K)
			sinceFit++
		}
		trials = append(trials, t)
		if len(cps) > 0 && len(trials) == cps[0] {
			cps = cps[1:]
			if err := at(trials, fits); err != nil {
				return err
			}
		}
	}
	return nil
}
