package simulate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/oddactive"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// OddRun is a simulated odd-one-out study with one annotator at a time:
// random trials, or (Active) random trials for a warm-up and then the
// trials oddactive.Choose finds most uncertain under the native fit of the
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
				batch = oddactive.Choose(batch[:0], rng, prev, alpha, m, r.Candidates*m)
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
