// Package estimate answers "how many answers will this study need?" before
// it opens (issue 28): a simulated crowd answers the study as it will run,
// on its own settings, and the learning curve of those answers is
// projected.
//
// The simulation is the study's: its question format (triplet,
// odd-one-out or rank N:K, answered by simulate.TrialOracle's choice
// rules), each arm's design with its settings at its share of the
// participants (random, landmark-k1/k2, basis or active, built by
// simulate.BuildDesign as `closer simulate` builds it and driven by
// simulate.RunArms; the formats beyond the triplet ask random trials,
// their one design in the app, by simulate.RunTrialArms), its questions
// per participant (participants answer one after the other, each a block
// of that many questions, assigned to an arm when they start) and its
// held-out share (those questions enter no fit). Items are placed at
// random in the study's embedding dimension, with a share of wrong
// answers. The learning curve of the study's own fitting method on the
// answers, in the order they came (a trial's derived triplets, as the
// recompute fits them), is measured on the crowd's fresh answers to
// random triplets, fitted by the power law of internal/projection and
// read off at the error asked for; with arms, each arm's own answers get
// a curve of their own too, read off at the same error.
//
// Seeded, so the same settings give the same estimate, and bounded (the
// work budget below) so that it runs on demand inside a request.
package estimate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/projection"
	"github.com/closer-lab/closer/internal/simulate"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// Bounds of an estimate's cost.
const (
	// MaxItems is the most items a simulation places (a larger study's
	// estimate is refused: its fits would take minutes).
	MaxItems = 500
	// MinBudget and MaxBudget bound the simulated answers.
	MinBudget = 400
	MaxBudget = 12000
	// TestAnswers is the number of the simulated crowd's held-out answers.
	TestAnswers = 2000
	// TargetGap is the automatic target's distance above the error the
	// curve levels off at.
	TargetGap = 0.02
	// MaxRefits bounds an active arm's refits in the simulation: its
	// worker refits after every pool of answers as the app's does, but at
	// most MaxRefits times (every arm's answers / MaxRefits answers
	// then). The app's refits are the estimate's largest cost (an active
	// study at the caps: 4.4 s on 2 idle cores with a refit per pool,
	// docs/benchmarks.md), and the curve it measures barely moves with
	// them.
	MaxRefits = 12
	// ArmPoints is the number of points of each arm's own learning curve
	// (the study's has projection.DefaultPoints): with up to 8 arms,
	// their fits together cost about as much as the study's curve.
	ArmPoints = projection.MinPoints + 1
	// MaxQuestions bounds the questions per participant simulated.
	MaxQuestions = 100000
)

// Assumptions are what an estimate assumes: the study's settings (Items;
// Format, "" or "triplet", "odd-one-out" or "rank:N:K"; Design and its
// Config, with arms the first arm's; Arms, its arms (none: one design);
// Questions per participant and the HeldoutShare of their questions; the
// fitting Method and Dim) and the simulated crowd's (Wrong: the share of
// wrong answers), the simulated answers (Budget: 0 for Budget's default)
// and the target held-out error (0: TargetGap above where the curve levels
// off).
type Assumptions struct {
	Items     int     `json:"items"`
	Design    string  `json:"design"`
	Questions int     `json:"questions"`
	Method    string  `json:"method"`
	Dim       int     `json:"dim"`
	Wrong     float64 `json:"wrong"`
	Budget    int     `json:"budget"`
	Target    float64 `json:"target"`
	Seed      uint64  `json:"seed"`
	// Config are Design's settings.
	Config       DesignConfig `json:"config"`
	Format       string       `json:"format,omitempty"`
	Arms         []Arm        `json:"study_arms,omitempty"`
	HeldoutShare float64      `json:"heldout_share,omitempty"`
}

// Arm is one arm of a study with arms: its name, design, the design's
// settings and its share of the participants.
type Arm struct {
	Name   string       `json:"name"`
	Design string       `json:"design"`
	Config DesignConfig `json:"config"`
	Share  float64      `json:"share"`
}

// DesignConfig are a design's settings as a study stores them
// (study.DesignConfig, with the same names): the landmark designs use
// Landmarks or LandmarkItems and Repeats; basis Repeats, Extra and
// Coordinates; active Warmup, Score, Model, Candidates, Pool and Repeats;
// random none. A zero setting takes the design's default. Seed fixes the
// design's own random choices (0: one from the estimate's seed).
type DesignConfig struct {
	Seed          uint64 `json:"seed"`
	Repeats       int    `json:"repeats,omitempty"`
	Landmarks     int    `json:"landmarks,omitempty"`
	LandmarkItems []int  `json:"landmark_items,omitempty"`
	Extra         bool   `json:"extra,omitempty"`
	Coordinates   string `json:"coordinates,omitempty"`
	Warmup        int    `json:"warmup,omitempty"`
	Score         string `json:"score,omitempty"`
	Model         string `json:"model,omitempty"`
	Candidates    int    `json:"candidates,omitempty"`
	Pool          int    `json:"pool,omitempty"`
}

// Designs are the designs an estimate simulates; any other (and "") is
// simulated as random questions.
var Designs = []string{"random", "landmark-k1", "landmark-k2", "basis", "active"}

// DefaultBudget is the simulated answers for n items in d dimensions:
// three times n·d·log2 n (the rule of thumb of Jamieson and Nowak 2011
// that NEXT's documentation gives for the answers an embedding needs),
// within [MinBudget, MaxBudget].
func DefaultBudget(n, d int) int {
	b := 3 * float64(n) * float64(d) * math.Log2(float64(n))
	return int(math.Min(MaxBudget, math.Max(MinBudget, math.Round(b))))
}

// FormatBudget is the simulated answers for n items in d dimensions in a
// format whose answers imply per triplets each: DefaultBudget's triplets
// in answers (rounded up), so that the triplets fitted stay within
// MaxBudget.
func FormatBudget(n, d, per int) int {
	return (DefaultBudget(n, d) + per - 1) / per
}

// Result is what the simulation found: its learning curve (answers, error
// on the crowd's held-out answers), the fitted e(n) = A + B·n^(−C), the
// target, and the answers for it with their interval at Level (a nil
// High: never; a nil Value: the curve does not reach the target).
type Result struct {
	Points     []projection.Point `json:"points"`
	A, B, C    float64
	Level      float64  `json:"level"`
	Target     float64  `json:"target"`
	TargetAuto bool     `json:"target_auto"`
	Answers    *float64 `json:"answers"`
	Low        *float64 `json:"low"`
	High       *float64 `json:"high"`
	// Budget is the answers simulated (held-out ones included), Heldout
	// those held out, Participants the participants who answered.
	Budget       int `json:"budget"`
	Heldout      int `json:"heldout,omitempty"`
	Participants int `json:"participants,omitempty"`
	// Format is the questions' format simulated ("" in an estimate stored
	// before formats were simulated: triplets), PerAnswer the triplets
	// each answer implies (1 for a triplet).
	Format    string `json:"format,omitempty"`
	PerAnswer int    `json:"per_answer,omitempty"`
	// Design is the design whose questions were simulated (with arms, the
	// first arm's), About says how it was set up (simulate.BuildDesign's
	// line), and Fallbacks is how many of the answers were random
	// questions asked because the design had nothing open (as the app's
	// random fallback; all arms'). An estimate stored before designs were
	// simulated has no Design: its questions were random.
	Design    string `json:"design,omitempty"`
	About     string `json:"about,omitempty"`
	Fallbacks int    `json:"fallbacks"`
	// Band is the fitted curve with its prediction interval at Level,
	// from the first point to the larger of Budget and the answers
	// projected (at most ten times Budget), for the plot.
	Band []BandPoint `json:"band"`
	// Arms are the study's arms, each with the curve of its own answers
	// (none without arms).
	Arms []ArmResult `json:"arms,omitempty"`
}

// ArmResult is one arm of a simulated study: its design, how it was set
// up, its share, participants, answers (Simulated, Fallbacks among them)
// and the learning curve of its own answers on the same held-out answers,
// read off at the study's target: Answers of the arm's own (nil: the
// arm's curve does not reach it; Error: the arm had too few answers for a
// curve).
type ArmResult struct {
	Name         string             `json:"name"`
	Design       string             `json:"design"`
	About        string             `json:"about"`
	Share        float64            `json:"share"`
	Participants int                `json:"participants"`
	Simulated    int                `json:"simulated"`
	Fallbacks    int                `json:"fallbacks"`
	Points       []projection.Point `json:"points,omitempty"`
	A, B, C      float64
	Answers      *float64 `json:"answers"`
	Low          *float64 `json:"low"`
	High         *float64 `json:"high"`
	Error        string   `json:"error,omitempty"`
}

// BandPoint is the fitted curve's error at Answers with its interval.
type BandPoint struct {
	Answers float64 `json:"answers"`
	Error   float64 `json:"error"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
}

// MaxArms is the most arms a study runs (study.MaxArms).
const MaxArms = 8

// Validate checks a's bounds and fills its defaults.
func (a *Assumptions) Validate() error {
	f, err := parseFormat(a.Format)
	if err != nil {
		return err
	}
	switch {
	case a.Items < 3:
		return fmt.Errorf("estimate: %d items; the study needs at least 3", a.Items)
	case a.Items > MaxItems:
		return fmt.Errorf("estimate: %d items; the estimate before opening simulates at most %d", a.Items, MaxItems)
	case f.rank.N > 0 && a.Items <= f.rank.N:
		return fmt.Errorf("estimate: %d items; %s trials need more than %d", a.Items, a.Format, f.rank.N)
	case a.Dim < 1 || a.Dim > 10:
		return fmt.Errorf("estimate: dimension %d outside 1..10", a.Dim)
	case !(a.Wrong >= 0 && a.Wrong < 0.5):
		return fmt.Errorf("estimate: a share of wrong answers of %g outside [0, 0.5)", a.Wrong)
	case !(a.Target >= 0 && a.Target < 1):
		return fmt.Errorf("estimate: target error %g outside [0, 1)", a.Target)
	case a.Budget < 0 || a.Budget*f.per > MaxBudget:
		return fmt.Errorf("estimate: %d answers of %d triplets each outside 0..%d triplets", a.Budget, f.per, MaxBudget)
	case a.Questions < 1 || a.Questions > MaxQuestions:
		return fmt.Errorf("estimate: %d questions per participant outside 1..%d", a.Questions, MaxQuestions)
	case !(a.HeldoutShare >= 0 && a.HeldoutShare <= 0.5):
		return fmt.Errorf("estimate: a held-out share of %g outside [0, 0.5]", a.HeldoutShare)
	case len(a.Arms) == 1 || len(a.Arms) > MaxArms:
		return fmt.Errorf("estimate: %d arms; a study runs 2 to %d, or none", len(a.Arms), MaxArms)
	}
	names := map[string]bool{}
	for _, arm := range a.Arms {
		if arm.Name == "" || names[arm.Name] {
			return fmt.Errorf("estimate: arm %q: names must be given and differ", arm.Name)
		}
		names[arm.Name] = true
	}
	if f.format != trial.FormatTriplet {
		for _, arm := range a.armsOf() {
			if arm.Design != "random" {
				return fmt.Errorf("estimate: the %s design asks triplets only: %s studies use the random design", arm.Design, f.format)
			}
		}
	}
	if a.Budget == 0 {
		a.Budget = FormatBudget(a.Items, a.Dim, f.per)
	}
	if a.Method == "" {
		a.Method = string(embed.DefaultMethod)
	}
	return nil
}

// format is a study's question format as the simulation needs it: the
// format, its rank size, and the triplets one answer implies.
type format struct {
	format trial.Format
	rank   trial.RankSpec
	per    int
}

// parseFormat reads a format's text form ("" is the triplet), as
// study.ParseStudyFormat does.
func parseFormat(text string) (format, error) {
	switch trial.Format(text) {
	case "", trial.FormatTriplet:
		return format{format: trial.FormatTriplet, per: 1}, nil
	case trial.FormatOddOneOut:
		return format{format: trial.FormatOddOneOut, per: 2}, nil
	}
	spec, err := trial.ParseRankSpec(text)
	if err != nil {
		return format{}, fmt.Errorf("estimate: question format %q: %w", text, err)
	}
	return format{format: trial.FormatRank, rank: spec, per: trial.DerivedPerRank(spec)}, nil
}

// armsOf are the arms the study runs: its Arms, or its one design as an
// arm named after it with all the participants.
func (a *Assumptions) armsOf() []Arm {
	if len(a.Arms) > 0 {
		return a.Arms
	}
	return []Arm{{Name: a.Design, Design: a.Design, Config: a.Config, Share: 1}}
}

// Simulation is the simulated study's answers: the triplets its recompute
// fits from the answers that were not held out (PerAnswer a answer, in the
// order the answers came), the arm of each answer, the answers held out,
// the participants, and each arm as run (ArmResult without a curve).
type Simulation struct {
	X            *mat.Dense
	Format       string
	PerAnswer    int
	Triplets     []triplet.Triplet
	Arm          []int
	Heldout      int
	Participants int
	Arms         []ArmResult
}

// Simulate runs the study a describes (a validated: Run validates it)
// with its simulated crowd: items at random in a.Dim dimensions, the
// study's format, arms at their shares, questions per participant and
// held-out share.
func Simulate(ctx context.Context, a Assumptions) (*Simulation, error) {
	f, err := parseFormat(a.Format)
	if err != nil {
		return nil, err
	}
	x := triplet.Gaussian(triplet.NewRand(triplet.Mix64(a.Seed^1)), a.Items, a.Dim, 1)
	sim := &Simulation{X: x, Format: string(f.format), PerAnswer: f.per}
	if f.rank.N > 0 {
		sim.Format = f.rank.String()
	}
	arms := a.armsOf()
	study := simulate.Study{PerAnnotator: a.Questions, HeldoutShare: a.HeldoutShare}
	if f.format != trial.FormatTriplet {
		shares := make([]float64, len(arms))
		for i, arm := range arms {
			shares[i] = arm.Share
		}
		o := simulate.NewTrialOracle(x, a.Wrong, triplet.Mix64(a.Seed^2))
		res, err := simulate.RunTrialArms(ctx, simulate.TrialArmsRun{Oracle: o, Format: f.format, Rank: f.rank, Shares: shares,
			Study: study, Seed: triplet.Mix64(a.Seed ^ 3)}, a.Budget)
		if err != nil {
			return nil, err
		}
		sim.Triplets, sim.Arm, sim.Heldout = res.Trials.Triplets(), res.Arm, res.Heldout
		for i, arm := range arms {
			sim.Participants += res.Participants[i]
			sim.Arms = append(sim.Arms, ArmResult{Name: arm.Name, Design: "random", About: "random " + sim.Format + " trials",
				Share: arm.Share, Participants: res.Participants[i], Simulated: countOf(res.Arm, i)})
		}
		return sim, nil
	}
	runs := make([]simulate.Arm, len(arms))
	for i, arm := range arms {
		b, err := buildDesign(a, arm, i)
		if err != nil {
			return nil, fmt.Errorf("%s design: %w", b.name, err)
		}
		if b.Worker != nil {
			// At most MaxRefits refits of the arm's answers (the work
			// budget), after every pool as the app's worker when fewer.
			share := float64(a.Budget) * arm.Share * (1 - a.HeldoutShare)
			if every := int(math.Ceil(share / MaxRefits)); every > b.Worker.Every {
				b.Worker.Every = every
				b.About += fmt.Sprintf("; simulated with at most %d refits, every %d answers", MaxRefits, every)
			}
		}
		runs[i] = simulate.Arm{Name: arm.Name, Share: arm.Share, Design: b.Design, Worker: b.Worker}
		sim.Arms = append(sim.Arms, ArmResult{Name: arm.Name, Design: b.name, About: b.About, Share: arm.Share})
	}
	crowd := simulate.Crowd{Oracle: triplet.NewOracle(x, a.Wrong, triplet.Mix64(a.Seed^2)), Annotators: 1, Seed: triplet.Mix64(a.Seed ^ 3)}
	per := make([][]triplet.Triplet, len(arms))
	_, err = simulate.RunArms(ctx, runs, crowd, study, a.Budget, []int{a.Budget}, func(cp simulate.StudyCheckpoint) error {
		sim.Heldout, sim.Participants, sim.Arm = len(cp.Heldout), cp.Annotators, slices.Clone(cp.Order)
		for i, ac := range cp.Arms {
			per[i] = ac.Triplets
			sim.Arms[i].Participants, sim.Arms[i].Simulated, sim.Arms[i].Fallbacks = ac.Annotators, ac.Answers, ac.Fallbacks
		}
		// The arms' answers interleaved back in the order they came.
		next := make([]int, len(arms))
		sim.Triplets = make([]triplet.Triplet, 0, len(cp.Order))
		for _, i := range cp.Order {
			sim.Triplets = append(sim.Triplets, per[i][next[i]])
			next[i]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sim, nil
}

// countOf counts the answers of arm i.
func countOf(arm []int, i int) int {
	n := 0
	for _, a := range arm {
		if a == i {
			n++
		}
	}
	return n
}

// answersOf returns the triplets of arm i's answers (per triplets an
// answer), in order.
func (s *Simulation) answersOf(i int) []triplet.Triplet {
	var out []triplet.Triplet
	for k, a := range s.Arm {
		if a == i {
			out = append(out, s.Triplets[k*s.PerAnswer:(k+1)*s.PerAnswer]...)
		}
	}
	return out
}

// Run simulates the study a describes and projects its answers.
func Run(ctx context.Context, a Assumptions) (*Result, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	m, err := embed.ParseMethod(a.Method)
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	sim, err := Simulate(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	// The held-out error: on fresh answers of the crowd to random
	// triplets, as noisy as the rest, whatever the format asked.
	test := triplet.RandomTriplets(triplet.NewRand(triplet.Mix64(a.Seed^4)), triplet.NewOracle(sim.X, a.Wrong, triplet.Mix64(a.Seed^7)), TestAnswers)
	fit := embed.Options{Method: m, Dim: a.Dim, Seed: a.Seed}
	// The curve's answers are the study's, held-out ones included: the
	// fitted answers times the answers asked per answer fitted.
	scale := float64(a.Budget) / float64(max(len(sim.Arm), 1))
	cv, err := curve(ctx, a.Items, sim.Triplets, sim.PerAnswer, scale, test, fit, projection.DefaultPoints, a.Seed)
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	pts := cv.Points
	r := &Result{Points: pts, A: cv.A, B: cv.B, C: cv.C, Level: cv.Level, Target: a.Target, Budget: a.Budget,
		Heldout: sim.Heldout, Participants: sim.Participants, Format: sim.Format, PerAnswer: sim.PerAnswer,
		Design: sim.Arms[0].Design, About: sim.Arms[0].About}
	for _, arm := range sim.Arms {
		r.Fallbacks += arm.Fallbacks
	}
	if r.Target <= 0 {
		r.Target, r.TargetAuto = cv.A+TargetGap, true
	}
	e := cv.AnswersFor(r.Target)
	r.Answers, r.Low, r.High = finite(e.Value), finite(e.Low), finite(e.High)
	lo, hi := float64(pts[0].Answers), float64(a.Budget)
	if r.Answers != nil {
		hi = math.Max(hi, math.Min(*r.Answers, 10*hi))
	}
	for k := range 9 {
		n := lo * math.Pow(hi/lo, float64(k)/8)
		b := cv.ErrorAt(n)
		if finite(b.Value) != nil && finite(b.Low) != nil && finite(b.High) != nil {
			r.Band = append(r.Band, BandPoint{Answers: n, Error: b.Value, Low: b.Low, High: b.High})
		}
	}
	if len(a.Arms) == 0 {
		return r, nil
	}
	// Each arm's own answers, on the same held-out answers, read off at
	// the study's target (in the arm's answers, held-out ones included).
	for i, arm := range sim.Arms {
		ts := sim.answersOf(i)
		if arm.Simulated > 0 {
			if cv, err := warmCurve(ctx, a.Items, ts, sim.PerAnswer, scale, test, fit, ArmPoints, a.Seed+uint64(i)+1); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("estimate: %w", ctx.Err())
				}
				arm.Error = err.Error()
			} else {
				e := cv.AnswersFor(r.Target)
				arm.Points, arm.A, arm.B, arm.C = cv.Points, cv.A, cv.B, cv.C
				arm.Answers, arm.Low, arm.High = finite(e.Value), finite(e.Low), finite(e.High)
			}
		} else {
			arm.Error = "no answers in the simulation"
		}
		r.Arms = append(r.Arms, arm)
	}
	return r, nil
}

// curve measures the learning curve of the triplets ts (per triplets an
// answer, in the order the answers came) at points sizes of whole answers
// on test, in answers times scale, and fits it.
func curve(ctx context.Context, n int, ts []triplet.Triplet, per int, scale float64, test []triplet.Triplet, fit embed.Options, points int, seed uint64) (*projection.Curve, error) {
	answers := len(ts) / per
	sizes := projection.Sizes(answers, points, projection.DefaultRatio)
	if len(sizes) < projection.MinPoints {
		return nil, fmt.Errorf("%d simulated answers are too few for a learning curve", answers)
	}
	tsizes := make([]int, len(sizes))
	for i, s := range sizes {
		tsizes[i] = s * per
	}
	pts, err := projection.Measure(ctx, n, ts, test, tsizes, fit, 0)
	if err != nil {
		return nil, err
	}
	for i := range pts {
		pts[i].Answers = int(math.Round(float64(sizes[i]) * scale))
	}
	return projection.FitCurve(pts, projection.Options{Seed: seed})
}

// warmCurve is curve for an arm's answers with its fits in a chain: the
// first from the method's default start, each next one warm-started from
// the one before (as the app's recomputes warm-start from the last run),
// so that only the first computes the start (classical MDS, a dense
// eigendecomposition of n × n: 57% of the CPU of an estimate with 8
// arms whose curves all started cold) and the rest fit from one start
// instead of several. A fit sees only the answers up to its size, its
// start included: no later answer informs an earlier point.
func warmCurve(ctx context.Context, n int, ts []triplet.Triplet, per int, scale float64, test []triplet.Triplet, fit embed.Options, points int, seed uint64) (*projection.Curve, error) {
	answers := len(ts) / per
	sizes := projection.Sizes(answers, points, projection.DefaultRatio)
	if len(sizes) < projection.MinPoints {
		return nil, fmt.Errorf("%d simulated answers are too few for a learning curve", answers)
	}
	pts := make([]projection.Point, len(sizes))
	var prev *mat.Dense
	for i, s := range sizes {
		o := fit
		o.Init, o.Seed = prev, triplet.Mix64(fit.Seed^uint64(s*per))
		res, err := embed.Fit(ctx, n, ts[:s*per], o)
		if err != nil {
			return nil, fmt.Errorf("learning curve: %d answers: %w", s, err)
		}
		prev = res.X
		pts[i] = projection.Point{Answers: int(math.Round(float64(s) * scale)), Error: embed.TripletError(res.X, test)}
	}
	return projection.FitCurve(pts, projection.Options{Seed: seed})
}

// builtDesign is the design an estimate simulates and its name.
type builtDesign struct {
	simulate.BuiltDesign
	name string
}

// buildDesign builds arm i's design with its settings, as `closer
// simulate` builds it (simulate.BuildDesign); the active design's worker
// refits in a.Dim dimensions.
func buildDesign(a Assumptions, arm Arm, i int) (builtDesign, error) {
	c := arm.Config
	b := builtDesign{name: arm.Design}
	if !slices.Contains(Designs, b.name) {
		b.name = "random"
	}
	sp := simulate.DesignSpec{Design: b.name, N: a.Items, Dim: a.Dim, Repeats: max(c.Repeats, 1),
		Landmarks: c.LandmarkItems, NumLandmarks: c.Landmarks, Extra: c.Extra, Coordinates: c.Coordinates,
		Warmup: c.Warmup, Model: c.Model, Score: c.Score, Candidates: c.Candidates, Pool: c.Pool}
	if sp.Coordinates == "" {
		sp.Coordinates = basis.CoordRankDifference
	}
	if sp.Warmup == 0 {
		sp.Warmup = active.DefaultWarmupPerItem
	}
	if sp.Model == "" {
		sp.Model = string(active.TSTE)
	}
	if sp.Score == "" {
		sp.Score = string(active.Uncertainty)
	}
	if sp.Candidates == 0 {
		sp.Candidates = active.DefaultCandidates
	}
	seed := c.Seed
	if seed == 0 {
		seed = triplet.Mix64((a.Seed ^ 5) + uint64(i))
	}
	var err error
	b.BuiltDesign, err = simulate.BuildDesign(sp, simulate.Estimator{}, seed, triplet.Mix64((a.Seed^6)+uint64(i)))
	return b, err
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
