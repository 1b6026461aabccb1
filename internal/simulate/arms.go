package simulate

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Arm is one of several designs that a study runs at once, on the same
// items and the same crowd.
type Arm struct {
	// Name identifies the arm (unique in a run): two arms may run the same
	// design with different settings, e.g. "active/infogain" and
	// "active/uncertainty".
	Name string
	// Share is the proportion of annotators assigned to the arm: positive,
	// and the shares of a run sum to 1 (design.CheckShares).
	Share float64
	// Design is the arm's own state machine.
	Design design.Design
	// Worker refits the embedding of the arm's answers for a Refresher
	// design (nil: none).
	Worker *Worker
}

// Study is how the crowd's annotators meet the arms.
type Study struct {
	// PerAnnotator is the number of questions each annotator answers (the
	// app's questions per participant); when one is done, a new annotator
	// takes their place and is assigned to an arm. 0: no limit, the
	// Crowd.Annotators first annotators answer to the end.
	PerAnnotator int
	// HeldoutShare is the share h in [0, 1) of every annotator's questions
	// that are held out (design.HeldOut decides by the annotator's number
	// and the question's position): uniformly random comparisons, answered
	// by the crowd like any other, that never reach an arm's design or
	// worker. Together they are the study's common test set.
	HeldoutShare float64
}

// ArmCheckpoint is one arm's state at a checkpoint. Its Checkpoint holds
// the arm's own answers (not the held-out ones), so Assess judges the arm
// as it judges a single design.
type ArmCheckpoint struct {
	Name string
	// Annotators is the number of annotators assigned to the arm so far.
	Annotators int
	Checkpoint
}

// StudyCheckpoint is the state of a run of arms after some answers.
type StudyCheckpoint struct {
	// Answers counts all answers so far, the held-out ones included.
	Answers int
	// Heldout are the held-out answers so far, in the order they were
	// given (shared with the run: read, do not keep or modify).
	Heldout []triplet.Triplet
	// Annotators is the number of annotators who have started.
	Annotators int
	// Arms are the arms, in the order given.
	Arms []ArmCheckpoint
	// Order is the arm of each answer so far that is not held out, in
	// the order given: with it the arms' answers interleave back into the
	// study's (shared with the run: read, do not keep or modify).
	Order []int
}

// ArmStats sums up one arm of a run: Stats over the arm's own answers
// (Rounds counts the rounds in which the arm had a question to ask) and
// the annotators assigned to it.
type ArmStats struct {
	Name       string
	Annotators int
	Stats
}

// StudyStats sums up a run of arms.
type StudyStats struct {
	// Answers counts all answers, Heldout the held-out ones among them;
	// Rounds is the number of rounds, Annotators the annotators started.
	Answers, Heldout, Rounds, Annotators int
	Arms                                 []ArmStats
}

// armRun is the driver's state of one arm.
type armRun struct {
	arm       Arm
	refresher Refresher
	st        ArmStats
	ts        []triplet.Triplet
	fallback  []bool
	handed    map[triplet.Key]int
	open      []design.Need
	round     []question
	next      int // the next question of round to hand out
	fit       *mat.Dense
	fitAt     int
}

// slot is one of the crowd's places: the annotator answering there now.
type slot struct {
	annotator int // -1: nobody yet
	arm       int
	asked     int // questions the annotator has answered
	heldout   bool
}

// RunArms drives several designs (arms) with one crowd on the same points
// until budget answers are collected in all, calling at for every
// checkpoint (a number of answers, held-out ones included; the budget is
// always the last). Run is RunArms with one arm.
//
// Each round, Crowd.Annotators annotators answer one question each, as in
// Run. An annotator is assigned to an arm when they start, by the arms'
// shares (design.NextArm: every prefix of the annotators is within one
// annotator of the shares); with Study.PerAnnotator set, an annotator
// leaves after that many questions and the next one starts in their place
// at the following round. An annotator's question is held out by
// design.HeldOut (a uniformly random comparison drawn from the crowd's
// seed, the annotator and the position, recorded in
// StudyCheckpoint.Heldout and nowhere else); otherwise it comes from the
// arm's design: each arm leases its open comparisons to its annotators of
// the round exactly as Run leases to all (random fallbacks when it has
// too few), arms in the order given, and the answers are recorded with the
// arm's design in annotator order. An arm's worker fits the arm's own
// answers only (fallbacks included, held-out answers never), between
// rounds, counting the arm's answers for Worker.Every.
func RunArms(ctx context.Context, arms []Arm, crowd Crowd, study Study, budget int, checkpoints []int, at func(StudyCheckpoint) error) (StudyStats, error) {
	if crowd.Oracle == nil {
		panic("simulate: Run without an oracle")
	}
	n, _ := crowd.Oracle.X.Dims()
	if n < 3 {
		return StudyStats{}, fmt.Errorf("simulate: need at least 3 points, have %d", n)
	}
	if crowd.Annotators < 1 {
		return StudyStats{}, fmt.Errorf("simulate: need at least 1 annotator, have %d", crowd.Annotators)
	}
	if budget < 1 {
		return StudyStats{}, fmt.Errorf("simulate: budget %d, want at least 1", budget)
	}
	if study.PerAnnotator < 0 {
		return StudyStats{}, fmt.Errorf("simulate: %d questions per annotator, want at least 1 (or 0: no limit)", study.PerAnnotator)
	}
	if !(study.HeldoutShare >= 0 && study.HeldoutShare < 1) {
		return StudyStats{}, fmt.Errorf("simulate: held-out share %g, want 0 <= h < 1", study.HeldoutShare)
	}
	shares := make([]float64, len(arms))
	runs := make([]*armRun, len(arms))
	names := map[string]bool{}
	for i, a := range arms {
		switch {
		case a.Name == "":
			return StudyStats{}, fmt.Errorf("simulate: arm %d has no name", i)
		case names[a.Name]:
			return StudyStats{}, fmt.Errorf("simulate: two arms named %q", a.Name)
		case a.Design == nil:
			return StudyStats{}, fmt.Errorf("simulate: arm %q has no design", a.Name)
		}
		names[a.Name] = true
		shares[i] = a.Share
		r := &armRun{arm: a, st: ArmStats{Name: a.Name}, handed: map[triplet.Key]int{}}
		r.refresher, _ = a.Design.(Refresher)
		if a.Worker == nil {
			r.refresher = nil
		} else if r.refresher != nil && (a.Worker.Every < 1 || a.Worker.Fit == nil) {
			return StudyStats{}, fmt.Errorf("simulate: worker refitting every %d answers, want at least 1 and a fit", a.Worker.Every)
		}
		if len(arms) == 1 {
			r.ts, r.fallback = make([]triplet.Triplet, 0, budget), make([]bool, 0, budget)
		}
		runs[i] = r
	}
	if err := design.CheckShares(shares); err != nil {
		return StudyStats{}, fmt.Errorf("simulate: %w", err)
	}
	cps := normaliseCheckpoints(checkpoints, budget)
	rng := triplet.NewRand(crowd.Seed)
	m := crowd.Annotators

	var (
		ss      = StudyStats{Arms: make([]ArmStats, len(arms))}
		heldout []triplet.Triplet
		order   []int
		counts  = make([]int, len(arms))
		need    = make([]int, len(arms))
		slots   = make([]slot, m)
	)
	for i := range slots {
		slots[i].annotator = -1
	}
	stats := func() StudyStats {
		for i, r := range runs {
			ss.Arms[i] = r.st
		}
		return ss
	}
	for ss.Answers < budget {
		if err := ctx.Err(); err != nil {
			return stats(), err
		}
		for _, r := range runs {
			if err := r.refit(ctx); err != nil {
				return stats(), err
			}
		}
		ss.Rounds++
		take := min(m, budget-ss.Answers)
		clear(need)
		for s := range slots[:take] {
			sl := &slots[s]
			if sl.annotator < 0 || (study.PerAnnotator > 0 && sl.asked == study.PerAnnotator) {
				a := design.NextArm(shares, counts)
				counts[a]++
				runs[a].st.Annotators++
				*sl = slot{annotator: ss.Annotators, arm: a}
				ss.Annotators++
			}
			sl.heldout = design.HeldOut(study.HeldoutShare, crowd.Seed, uint64(sl.annotator), sl.asked)
			if !sl.heldout {
				need[sl.arm]++
			}
		}
		for i, r := range runs {
			r.round, r.next = r.round[:0], 0
			if need[i] == 0 {
				continue
			}
			r.st.Rounds++
			r.round = lease(r.round, r.arm.Design, &r.open, need[i], rng, n)
			for _, q := range r.round {
				if !q.fallback {
					r.handed[q.key]++
					r.st.MaxHanded = max(r.st.MaxHanded, r.handed[q.key])
				}
			}
		}
		// Everybody answers, then the answers are recorded in order.
		for s := range slots[:take] {
			sl := &slots[s]
			if sl.heldout {
				a, j, k := triplet.RandomQuestion(triplet.NewRand(heldoutSeed(crowd.Seed, sl.annotator, sl.asked)), n)
				heldout = append(heldout, crowd.Oracle.Answer(a, j, k))
				ss.Heldout++
			} else {
				r := runs[sl.arm]
				q := r.round[r.next]
				r.next++
				t := crowd.Oracle.Answer(q.key.Anchor, q.key.J, q.key.K)
				if q.fallback {
					r.st.Fallbacks++
				} else if !r.arm.Design.Record(t) {
					r.st.Refused++
				}
				r.ts = append(r.ts, t)
				r.fallback = append(r.fallback, q.fallback)
				r.st.Answers++
				order = append(order, sl.arm)
			}
			sl.asked++
			ss.Answers++
			if len(cps) > 0 && ss.Answers == cps[0] {
				cps = cps[1:]
				cp := StudyCheckpoint{Answers: ss.Answers, Heldout: heldout, Annotators: ss.Annotators, Arms: make([]ArmCheckpoint, len(runs)), Order: order}
				for i, r := range runs {
					cp.Arms[i] = ArmCheckpoint{Name: r.arm.Name, Annotators: r.st.Annotators, Checkpoint: Checkpoint{
						Answers: r.st.Answers, Fallbacks: r.st.Fallbacks, Triplets: r.ts, Fallback: r.fallback, Design: r.arm.Design}}
				}
				if err := at(cp); err != nil {
					return stats(), err
				}
			}
		}
	}
	return stats(), nil
}

// refit fits the arm's answers and refreshes its design when the arm has
// a worker and a Refresher design: as soon as the warm-up is over, then
// every Worker.Every answers of the arm.
func (r *armRun) refit(ctx context.Context) error {
	if r.refresher == nil || !r.refresher.WarmedUp() || (r.fit != nil && r.st.Answers-r.fitAt < r.arm.Worker.Every) {
		return nil
	}
	x, err := r.arm.Worker.Fit(ctx, r.ts, r.fit)
	if err != nil {
		return fmt.Errorf("simulate: %sworker fit after %d answers: %w", r.label(), r.st.Answers, err)
	}
	if err := r.refresher.Refresh(x, r.ts); err != nil {
		return fmt.Errorf("simulate: %srefresh after %d answers: %w", r.label(), r.st.Answers, err)
	}
	r.fit, r.fitAt = x, r.st.Answers
	r.st.Fits++
	return nil
}

// label names the arm in errors of a run with several.
func (r *armRun) label() string {
	if r.arm.Share == 1 {
		return ""
	}
	return "arm " + r.arm.Name + ": "
}

// heldoutSeed is the seed of the held-out question at position pos of
// annotator a: independent of the fallback questions and of every design.
func heldoutSeed(seed uint64, a, pos int) uint64 {
	z := seed ^ 0x74657374 // "test"
	for _, v := range []uint64{uint64(a), uint64(pos)} {
		z = triplet.Mix64(z + v*triplet.Golden + 0x632be59bd9b4e019)
	}
	return z
}
