package recompute

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// FastMS is the default "very fast answer" threshold of the participants'
// figures (FastShare), for a study whose exclusion rules set none.
const FastMS = 1000

// FastThreshold is study st's "very fast answer" threshold in ms: the one
// of its exclusion rules when they set one (the rule's "an answer under …
// ms"), else FastMS. A run counts FastShare under it and keeps it with its
// results (Result.FastMS), so the figures always say which threshold they
// used.
func FastThreshold(st study.Study) int {
	if st.Exclusion.FastMS > 0 {
		return st.Exclusion.FastMS
	}
	return FastMS
}

// Settings are what a run of a study computes with (stored with the run).
type Settings struct {
	Method      string  `json:"method"`
	Dim         int     `json:"dim"`
	Clusters    int     `json:"clusters"`
	HoldoutFrac float64 `json:"holdout_frac"`
	Seed        uint64  `json:"seed"`
	Neighbours  int     `json:"neighbours"`
	FastMS      int     `json:"fast_ms"`
	WarmStart   bool    `json:"warm_start"`
	Excluded    int     `json:"excluded_answers"` // answers left out (excluded participants)
	// Heldout counts the study's held-out answers (of participants not
	// excluded): the test set of the arms, left out of every fit.
	Heldout int `json:"heldout_answers"`
	// ExcludedParticipants fingerprints the participants whose answers
	// the run left out as excluded (those excluded with answers when it
	// read them), so that the dashboard can tell whether the exclusions
	// changed since (collect.Store.ExcludedWithAnswers). Nil in runs
	// stored before runs kept it: unknown.
	ExcludedParticipants *study.ExclusionSum `json:"excluded_participants,omitempty"`
}

// TrustMaxAnswers caps the training answers a run's dimension choice and
// bootstrap fit (analysis.TrustSettings.MaxAnswers): 20,000, a little
// above issue 28's 15,000-answer study, whose run with the defaults takes
// 12 s of wall time at a load average of 12 on the shared 2-core machine
// (docs/benchmarks.md); a study of 100,000 answers costs no more there.
const TrustMaxAnswers = 20000

// The trust parts (dimension choice, bootstrap, projection) cost tens of
// fits, seconds of both cores at a few hundred items, in the process that
// serves the answers when ROLE=all: run on every recompute they took the
// CPU a crowd of 1,500 needed (issue 24's crowd run: answer p99 31 ms
// before, 1.2 s and 576 answers shed after). So a run computes them only
// when they are due, and otherwise carries the last ones forward with a
// note: when none is stored, once the answers grew by TrustGrowth since
// the last and it is TrustMinAge old, or once it is TrustMaxAge old; the dashboard shows the last
// ones meanwhile (CarriedTrust).
const (
	TrustGrowth = 1.25
	TrustMinAge = 10 * time.Minute // a growing crowd's study would otherwise redo them every few runs
	TrustMaxAge = time.Hour
)

// TrustDue reports whether a run over answers answers at now computes the
// trust parts anew, given the last stored (nil: none) of lastAnswers at
// lastAt.
func TrustDue(last *analysis.Trust, lastAnswers int, lastAt time.Time, answers int, now time.Time) bool {
	age := now.Sub(lastAt)
	return last == nil || (float64(answers) >= TrustGrowth*float64(lastAnswers) && age >= TrustMinAge) || age >= TrustMaxAge
}

// CarriedTrust is the last trust (of run runID over answers answers,
// stored at at) as a later run without its own shows it: the same parts,
// with a note of where they come from.
func CarriedTrust(t *analysis.Trust, runID int64, answers int, at time.Time) *analysis.Trust {
	c := *t
	c.Notes = append(append([]string{}, t.Notes...), fmt.Sprintf(
		"The dimension choice, uncertainty and projection are those of run %d (%d answers, %s UTC): they are computed again once the answers grow by a quarter (at most every 10 minutes), or an hour after.",
		runID, answers, at.UTC().Format("2006-01-02 15:04")))
	return &c
}

// TrustSettings are a study's trust settings as analysis takes them.
func TrustSettings(t study.TrustSettings) analysis.TrustSettings {
	return analysis.TrustSettings{MaxDim: t.MaxDim, Folds: t.Folds, Bootstrap: t.Bootstrap,
		Projection: t.Project, TargetError: t.TargetError, MaxAnswers: TrustMaxAnswers,
		Workers: 1} // one core for the parts' fits: the others serve the answers meanwhile
}

// The stages a run reports after analysis.Stages.
const (
	StageArms  = "arm fits"       // each arm's fit, judged on the held-out answers
	StagePools = "question pools" // the active arms' pool refreshes
)

// Run recomputes the study now: it loads the answers of participants not
// excluded, runs analysis.Recompute warm-started from the last run's
// embedding (when it has the same items and dimensions), computes every
// participant's quality figures (excluded ones too, so the researcher can
// judge them) and stores the run with its results. Progress is the run's
// stage. A cancelled ctx ends the run as cancelled. It returns the run's id.
// A study that does not exist or is being deleted is KindNotFound, with no
// run stored.
//
// Held-out answers (collect.DesignHeldout) enter no fit, kernel or cluster
// and not the embedding's own held-out share: they are the study's common
// test set. For a study with arms or a held-out share (or held-out answers)
// the run then fits each arm's answers and judges the fit on them
// (Result.Arms, Result.Curve); and for every active arm whose warm-up is
// over it refreshes the arm's pool of scored questions (Result.Pools).
func Run(ctx context.Context, store *collect.Store, studyID, jobID int64) (int64, error) {
	st, err := store.StudyByID(ctx, studyID)
	if err != nil {
		return 0, err
	}
	fastMS := FastThreshold(st)
	rs, err := store.RecomputeSettings(ctx, studyID)
	if err != nil {
		return 0, err
	}
	// The arms of the study read above (collect.ArmsOf: Store.StudyArms
	// would read the study again).
	cfg, err := store.DesignConfigOf(ctx, studyID)
	if err != nil {
		return 0, err
	}
	arms := study.ArmsOf(st, cfg)
	items, err := store.ListItems(ctx, studyID)
	if err != nil {
		return 0, err
	}
	all, err := store.RunAnswers(ctx, studyID, true)
	if err != nil {
		return 0, err
	}
	n := len(items)
	set := Settings{Method: rs.Method, Dim: rs.Dim, Clusters: rs.Clusters, HoldoutFrac: 0.1,
		Seed: uint64(studyID), Neighbours: 5, FastMS: fastMS}
	in := analysis.Input{N: n}
	var heldout []triplet.Triplet
	byArm := make([]armAnswers, len(arms))
	var excluded study.ExclusionSum
	seen := map[int64]bool{}
	for _, a := range all {
		if a.Excluded {
			set.Excluded++
			if !seen[a.Participant] {
				seen[a.Participant] = true
				excluded.Add(a.Participant)
			}
			continue
		}
		t := triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther}
		if a.Design == study.DesignHeldout {
			heldout = append(heldout, t)
			continue
		}
		in.Triplets = append(in.Triplets, t)
		in.IDs = append(in.IDs, a.QuestionID)
		in.Groups = append(in.Groups, int(a.Participant))
		if a.Arm >= 0 && a.Arm < len(byArm) {
			byArm[a.Arm].add(a, t)
		}
	}
	set.Heldout = len(heldout)
	set.ExcludedParticipants = &excluded
	var old *Result
	if prev, blob, err := store.LatestResult(ctx, studyID); err != nil {
		return 0, err
	} else if prev != nil {
		if r, err := Decode(blob); err == nil {
			old = r
		}
	}
	sameFit := old != nil && old.N == n && old.Dim == rs.Dim && old.Method == rs.Method
	if sameFit {
		in.Prev = old.EmbeddingMatrix()
		set.WarmStart = in.Prev != nil
	}
	runID, err := store.StartRun(ctx, studyID, jobID, len(in.Triplets), n, set)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	// Bookkeeping must land even when ctx is cancelled.
	bg := context.WithoutCancel(ctx)
	finish := func(o study.RunOutcome) error {
		o.Duration = time.Since(start)
		return store.FinishRun(bg, runID, o)
	}
	// fail ends the run on err: cancelled when ctx was, else failed.
	fail := func(err error) (int64, error) {
		status := study.RunFailed
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			status = study.RunCancelled
		}
		if ferr := finish(study.RunOutcome{Status: status, Error: err.Error()}); ferr != nil {
			return runID, ferr
		}
		return runID, fmt.Errorf("recompute study %d: %w", studyID, err)
	}

	fitSettings := analysis.Settings{Method: embed.Method(rs.Method), Dim: rs.Dim,
		Clusters: rs.Clusters, HoldoutFrac: set.HoldoutFrac, Seed: set.Seed, Neighbours: set.Neighbours}
	// The arms' fits below take fitSettings without the trust parts.
	withTrust := fitSettings
	if ts := TrustSettings(rs.Trust); ts.Enabled() {
		_, lastAnswers, lastAt, last, err := store.LatestTrust(ctx, studyID)
		if err != nil {
			return fail(err)
		}
		if TrustDue(last, lastAnswers, lastAt, len(in.Triplets), time.Now()) {
			withTrust.Trust = ts
		}
	}
	res, err := analysis.Recompute(ctx, in, withTrust,
		func(stage int) { _ = store.SetRunStage(bg, runID, analysis.Stages[stage]) })
	if err != nil {
		return fail(err)
	}
	if res.Trust != nil {
		if err := store.SaveRunTrust(bg, runID, res.Trust); err != nil {
			return fail(err)
		}
	}
	out := newResult(n, res)
	out.FastMS = fastMS
	if res.Heldout > 0 {
		out.FormatScore = formatScore(all, res.Embedding, set.Seed, set.HoldoutFrac)
	}

	// Participant quality over every answer, against the new embedding.
	index := map[int64]int{}
	var ids []string
	qa := make([]analysis.Answer, len(all))
	for i, a := range all {
		p, ok := index[a.Participant]
		if !ok {
			p = len(ids)
			index[a.Participant] = p
			ids = append(ids, a.PublicID)
		}
		side := analysis.SideRight
		if a.ChoseLeft {
			side = analysis.SideLeft
		}
		qa[i] = analysis.Answer{Participant: p, Triplet: triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther},
			ResponseMS: a.ResponseMS, Side: side}
	}
	for _, q := range analysis.ParticipantQuality(qa, fastMS, res.Embedding) {
		out.Participants = append(out.Participants, Participant{PublicID: ids[q.Participant], Answers: q.Answers,
			MedianResponseMS: num(q.MedianResponseMS), FastShare: num(q.FastShare), SelfContradiction: num(q.SelfContradiction),
			MajorityDisagreement: num(q.MajorityDisagreement), EmbeddingAgreement: num(q.EmbeddingAgreement),
			LeftShare: num(q.LeftShare)})
	}
	// The basis design's own coordinates and d̂, when the study has one
	// (arm 0's: the design of a study without arms, or its first arm).
	if d, err := store.DesignState(ctx, studyID, 0); err == nil {
		if b, ok := d.(*basis.Scheme); ok && b.N() == n {
			dhat := b.DHat()
			out.BasisDHat, out.BasisComplete = &dhat, b.BasisDone()
			out.BasisCoords = rowsOf(b.Coordinates())
		}
	} else if collect.KindOf(err) != study.KindNotFound {
		return fail(err)
	}

	// The arms compared on the held-out answers.
	var fits []*analysis.ArmFit
	if len(st.Arms) > 0 || st.HeldoutShare > 0 || len(heldout) > 0 {
		_ = store.SetRunStage(bg, runID, StageArms)
		if fits, err = fitArms(ctx, out, old, sameFit, arms, byArm, heldout, n, fitSettings, runID); err != nil {
			return fail(err)
		}
	}
	// The active arms' pools.
	if slices.ContainsFunc(arms, func(a study.Arm) bool { return a.Design == study.DesignActive }) {
		_ = store.SetRunStage(bg, runID, StagePools)
		if err := refreshPools(ctx, store, studyID, out, old, byArm, fits, n, rs); err != nil {
			return fail(err)
		}
	}

	blob, err := out.Encode()
	if err != nil {
		return fail(err)
	}
	if err := finish(study.RunOutcome{Status: study.RunDone, TrainError: out.TrainError,
		HeldoutError: out.HeldoutError, HeldoutAnswers: out.Heldout, Result: blob}); err != nil {
		return runID, err
	}
	return runID, nil
}
