package recompute

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// armAnswers are one arm's answers as a run fits them: its participants'
// answers that are not held out (fallbacks included), of participants not
// excluded.
type armAnswers struct {
	triplets     []triplet.Triplet
	participants map[int64]struct{}
	fallbacks    int
}

func (b *armAnswers) add(a study.RunAnswer, t triplet.Triplet) {
	if b.participants == nil {
		b.participants = map[int64]struct{}{}
	}
	b.triplets = append(b.triplets, t)
	b.participants[a.Participant] = struct{}{}
	if a.Design == study.DesignFallback {
		b.fallbacks++
	}
}

// fitArms fits each arm's answers with the study's settings s over n items
// (analysis.FitArm: from a random start and, when old has the same items,
// method and dimensions (sameFit), from the arm's fit in old, the better
// kept), judges each fit on the held-out answers
// and stores the arms and the learning curve (old's points, then this
// run's) in out. It returns the fits by arm (nil for an arm without
// answers).
func fitArms(ctx context.Context, out, old *Result, sameFit bool, arms []study.Arm, byArm []armAnswers,
	heldout []triplet.Triplet, n int, s analysis.Settings, runID int64) ([]*analysis.ArmFit, error) {
	out.HeldoutAnswers = len(heldout)
	if old != nil {
		out.Curve = append(out.Curve, old.Curve...)
	}
	fits := make([]*analysis.ArmFit, len(arms))
	for i, a := range arms {
		b := byArm[i]
		if len(b.triplets) == 0 {
			continue
		}
		var prev *mat.Dense
		if sameFit {
			for _, oa := range old.Arms {
				if oa.Arm == i {
					prev = matrixOf(oa.Embedding, n, s.Dim)
				}
			}
		}
		f, err := analysis.FitArm(ctx, n, b.triplets, heldout, s, prev)
		if err != nil {
			return nil, err
		}
		fits[i] = f
		out.Arms = append(out.Arms, ArmResult{Arm: i, Name: a.Name, Design: a.Design, Share: a.Share,
			Participants: len(b.participants), Answers: len(b.triplets), Fallbacks: b.fallbacks,
			Heldout: f.Heldout, Wrong: f.Wrong, HeldoutError: num(f.HeldoutError), TrainError: num(f.TrainError),
			Embedding: rowsOf(f.Embedding)})
		out.Curve = append(out.Curve, CurvePoint{Run: runID, Arm: i, Answers: len(b.triplets), Heldout: f.Heldout,
			Wrong: f.Wrong, HeldoutError: num(f.HeldoutError)})
	}
	out.Curve = thinCurve(out.Curve)
	return fits, nil
}

// refreshPools refreshes the pool of every active arm of the study whose
// warm-up is over (collect.Store.ActiveArms): it fits the arm's answers
// under the arm's answer model (t-STE, or CKL for the model "ckl"),
// reusing the arm's learning-curve fit (fits) when it is of the same
// method and items, else fitted as analysis.FitArm does (the better of a
// random start and the previous run's fit under that model); scores the next pool on the state's copy
// (active.Design.NextPool, outside any lock) and hands it to the arm's
// writer (Store.ApplyActivePool, which applies it on the latest state).
// What happened is kept in out.Pools; an arm whose refresh fails is
// reported there and the others go on. Only a cancelled ctx or a failure
// to read the arms is an error.
func refreshPools(ctx context.Context, store *collect.Store, studyID int64, out, old *Result, byArm []armAnswers,
	fits []*analysis.ArmFit, n int, rs study.RecomputeSettings) error {
	aas, err := store.ActiveArms(ctx, studyID)
	if err != nil {
		return err
	}
	for _, aa := range aas {
		if aa.State == nil || !aa.State.WarmedUp() {
			continue
		}
		method := embed.TSTE
		if aa.Config.Model == string(embed.CKL) {
			method = embed.CKL
		}
		pr := PoolRefresh{Arm: aa.Arm, Name: aa.Name, Method: string(method), Version: aa.Version}
		// The design covers the items present at its first question; a
		// fallback may ask about items uploaded since.
		dn := aa.State.N()
		var ts []triplet.Triplet
		if aa.Arm < len(byArm) {
			for _, t := range byArm[aa.Arm].triplets {
				if t.Valid(dn) == nil {
					ts = append(ts, t)
				}
			}
		}
		pr.Answers = len(ts)
		err := func() error {
			if len(ts) == 0 {
				return errNoAnswers
			}
			var x *mat.Dense
			if aa.Arm < len(fits) && fits[aa.Arm] != nil && string(method) == rs.Method && dn == n {
				x, pr.Reused = fits[aa.Arm].Embedding, true
			} else {
				var warm *mat.Dense
				if old != nil {
					for _, p := range old.Pools {
						if p.Arm == aa.Arm && p.Method == pr.Method {
							warm = matrixOf(p.Embedding, dn, rs.Dim)
						}
					}
				}
				fit, err := analysis.FitArm(ctx, dn, ts, nil, analysis.Settings{Method: method, Dim: rs.Dim, Seed: uint64(studyID)}, warm)
				if err != nil {
					return err
				}
				x, pr.Embedding = fit.Embedding, rowsOf(fit.Embedding)
			}
			if aa.Format.Format != study.FormatTriplet {
				qs, options, err := trialPool(aa, x, rs.Dim)
				if err != nil {
					return err
				}
				if err := store.ApplyTrialPool(ctx, studyID, aa.Arm, qs, options); err != nil {
					return err
				}
				pr.Questions = len(qs)
				return nil
			}
			qs, err := aa.State.NextPool(x, ts)
			if err != nil {
				return err
			}
			if err := store.ApplyActivePool(ctx, studyID, aa.Arm, qs); err != nil {
				return err
			}
			pr.Questions = len(qs)
			return nil
		}()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			pr.Error = err.Error()
		}
		out.Pools = append(out.Pools, pr)
	}
	return nil
}

type poolError string

func (e poolError) Error() string { return string(e) }

const errNoAnswers = poolError("the arm has no answers to fit (its participants are excluded)")
