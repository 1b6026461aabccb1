package simulate

import (
	"context"
	"fmt"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// TrialArmsRun is a study asking odd-one-out or rank trials by the
// random design (the one design those formats have in the app), with its
// participants in arms at their shares, each answering Study.PerAnnotator
// questions one after the other, a share of them held out: RunArms for
// the formats beyond the triplet, one participant at a time.
type TrialArmsRun struct {
	Oracle *TrialOracle
	// Format is trial.FormatOddOneOut or trial.FormatRank (with Rank).
	Format trial.Format
	Rank   trial.RankSpec
	// Shares are the arms' shares (design.CheckShares; nil: one arm).
	Shares []float64
	// Study sets the questions per participant (0: one participant
	// answers to the end) and the held-out share, as in RunArms.
	Study Study
	// Seed fixes the random trials and which questions are held out.
	Seed uint64
}

// TrialArms is what RunTrialArms collected.
type TrialArms struct {
	// Trials are the answers that were not held out, in the order they
	// came; Arm[i] is the arm of answer i.
	Trials Trials
	Arm    []int
	// Heldout counts the held-out answers (asked, left out of Trials).
	Heldout int
	// Participants counts each arm's participants.
	Participants []int
}

// RunTrialArms runs r until budget answers (held-out ones included) are
// collected. Participants start one at a time and are assigned to an arm
// by design.NextArm; question pos of participant p is held out when
// design.HeldOut(share, Seed, p, pos) says so (as RunArms decides), and
// otherwise a uniformly random trial answered by the oracle.
func RunTrialArms(ctx context.Context, r TrialArmsRun, budget int) (TrialArms, error) {
	n, _ := r.Oracle.X.Dims()
	shares := r.Shares
	if len(shares) == 0 {
		shares = []float64{1}
	}
	switch {
	case budget < 1:
		return TrialArms{}, fmt.Errorf("simulate: budget %d, want at least 1", budget)
	case r.Study.PerAnnotator < 0:
		return TrialArms{}, fmt.Errorf("simulate: %d questions per annotator, want at least 1 (or 0: no limit)", r.Study.PerAnnotator)
	case !(r.Study.HeldoutShare >= 0 && r.Study.HeldoutShare < 1):
		return TrialArms{}, fmt.Errorf("simulate: held-out share %g, want 0 <= h < 1", r.Study.HeldoutShare)
	case r.Format == trial.FormatOddOneOut && n < 3:
		return TrialArms{}, fmt.Errorf("simulate: odd-one-out trials need 3 items, have %d", n)
	case r.Format == trial.FormatRank:
		if err := r.Rank.Validate(); err != nil {
			return TrialArms{}, err
		}
		if n <= r.Rank.N {
			return TrialArms{}, fmt.Errorf("simulate: %s trials need more than %d items, have %d", r.Rank, r.Rank.N, n)
		}
	case r.Format != trial.FormatOddOneOut:
		return TrialArms{}, fmt.Errorf("simulate: RunTrialArms asks odd-one-out or rank trials, not %q", r.Format)
	}
	if err := design.CheckShares(shares); err != nil {
		return TrialArms{}, fmt.Errorf("simulate: %w", err)
	}
	rng := triplet.NewRand(r.Seed)
	out := TrialArms{Participants: make([]int, len(shares))}
	if r.Format == trial.FormatOddOneOut {
		out.Trials.Odd = make([]trial.OddOneOut, 0, budget)
	} else {
		out.Trials.Rank = make([]trial.Rank, 0, budget)
	}
	for p, asked := 0, 0; asked < budget; p++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		arm := design.NextArm(shares, out.Participants)
		out.Participants[arm]++
		for pos := 0; asked < budget && (r.Study.PerAnnotator == 0 || pos < r.Study.PerAnnotator); pos++ {
			asked++
			if design.HeldOut(r.Study.HeldoutShare, r.Seed, uint64(p), pos) {
				out.Heldout++
				continue
			}
			if r.Format == trial.FormatOddOneOut {
				out.Trials.Odd = append(out.Trials.Odd, RandomOddOneOut(rng, r.Oracle, 1)[0])
			} else {
				out.Trials.Rank = append(out.Trials.Rank, RandomRank(rng, r.Oracle, r.Rank, 1)[0])
			}
			out.Arm = append(out.Arm, arm)
		}
	}
	return out, nil
}
