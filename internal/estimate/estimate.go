// Package estimate answers "how many answers will this study need?" before
// it opens (issue 28): a simulated crowd answers the questions of the
// study's own design (random, landmark-k1/k2, basis or active, built by
// simulate.BuildDesign as `closer simulate` builds it, and run by the same
// simulator; a study with arms: its first arm's design) about items placed
// at random in the study's embedding dimension, with a share of wrong
// answers; the learning curve of the study's own fitting method on those
// answers, in the order they came, is measured on the crowd's held-out
// answers (random questions, as the dashboard's), fitted by
// the power law of internal/projection, and read off at the error asked
// for. Seeded, so the same settings give the same estimate, and bounded
// (MaxBudget answers, projection.DefaultPoints fits) so that it runs on
// demand.
package estimate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/projection"
	"github.com/closer-lab/closer/internal/simulate"
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
)

// Assumptions are what an estimate assumes: the study's settings (Items,
// Design and its Config, Questions per participant, the fitting Method and
// Dim; for a study with arms, Arms counts them and Arm names the first,
// whose design and settings Design and Config are) and the
// simulated crowd's (Wrong: the share of wrong answers), the simulated
// answers (Budget: 0 for Budget's default) and the target held-out error
// (0: TargetGap above where the curve levels off).
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
	// Config are Design's settings; Arm and Arms as above.
	Config DesignConfig `json:"config"`
	Arm    string       `json:"arm,omitempty"`
	Arms   int          `json:"arms,omitempty"`
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
	// Budget is the answers simulated.
	Budget int `json:"budget"`
	// Design is the design whose questions were simulated, About says
	// how it was set up (simulate.BuildDesign's line), and Fallbacks is
	// how many of the Budget answers were random questions asked because
	// the design had nothing open (as the app's random fallback). An
	// estimate stored before designs were simulated has no Design: its
	// questions were random.
	Design    string `json:"design,omitempty"`
	About     string `json:"about,omitempty"`
	Fallbacks int    `json:"fallbacks"`
	// Band is the fitted curve with its prediction interval at Level,
	// from the first point to the larger of Budget and the answers
	// projected (at most ten times Budget), for the plot.
	Band []BandPoint `json:"band"`
}

// BandPoint is the fitted curve's error at Answers with its interval.
type BandPoint struct {
	Answers float64 `json:"answers"`
	Error   float64 `json:"error"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
}

// Validate checks a's bounds and fills its defaults.
func (a *Assumptions) Validate() error {
	switch {
	case a.Items < 3:
		return fmt.Errorf("estimate: %d items; the study needs at least 3", a.Items)
	case a.Items > MaxItems:
		return fmt.Errorf("estimate: %d items; the estimate before opening simulates at most %d", a.Items, MaxItems)
	case a.Dim < 1 || a.Dim > 10:
		return fmt.Errorf("estimate: dimension %d outside 1..10", a.Dim)
	case !(a.Wrong >= 0 && a.Wrong < 0.5):
		return fmt.Errorf("estimate: a share of wrong answers of %g outside [0, 0.5)", a.Wrong)
	case !(a.Target >= 0 && a.Target < 1):
		return fmt.Errorf("estimate: target error %g outside [0, 1)", a.Target)
	case a.Budget < 0 || a.Budget > MaxBudget:
		return fmt.Errorf("estimate: %d answers outside 0..%d", a.Budget, MaxBudget)
	}
	if a.Budget == 0 {
		a.Budget = DefaultBudget(a.Items, a.Dim)
	}
	if a.Method == "" {
		a.Method = string(embed.DefaultMethod)
	}
	return nil
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
	x := triplet.Gaussian(triplet.NewRand(triplet.Mix64(a.Seed^1)), a.Items, a.Dim, 1)
	crowd := triplet.NewOracle(x, a.Wrong, triplet.Mix64(a.Seed^2))
	b, err := buildDesign(a)
	if err != nil {
		return nil, fmt.Errorf("estimate: %s design: %w", b.name, err)
	}
	var train []triplet.Triplet
	var fallbacks int
	_, err = simulate.RunWithWorker(ctx, b.Design, simulate.Crowd{Oracle: crowd, Annotators: 1, Seed: triplet.Mix64(a.Seed ^ 3)}, b.Worker,
		a.Budget, []int{a.Budget}, func(cp simulate.Checkpoint) error {
			train, fallbacks = append([]triplet.Triplet(nil), cp.Triplets...), cp.Fallbacks
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	test := triplet.RandomTriplets(triplet.NewRand(triplet.Mix64(a.Seed^4)), crowd, TestAnswers)
	sizes := projection.Sizes(a.Budget, projection.DefaultPoints, projection.DefaultRatio)
	if len(sizes) < projection.MinPoints {
		return nil, errors.New("estimate: too few simulated answers for a learning curve")
	}
	pts, err := projection.Measure(ctx, a.Items, train, test, sizes, embed.Options{Method: m, Dim: a.Dim, Seed: a.Seed}, 0)
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	cv, err := projection.FitCurve(pts, projection.Options{Seed: a.Seed})
	if err != nil {
		return nil, fmt.Errorf("estimate: %w", err)
	}
	r := &Result{Points: pts, A: cv.A, B: cv.B, C: cv.C, Level: cv.Level, Target: a.Target, Budget: a.Budget,
		Design: b.name, About: b.About, Fallbacks: fallbacks}
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
	return r, nil
}

// builtDesign is the design an estimate simulates and its name.
type builtDesign struct {
	simulate.BuiltDesign
	name string
}

// buildDesign builds a's design with its settings, as `closer simulate`
// builds it (simulate.BuildDesign); the active design's worker refits in
// a.Dim dimensions.
func buildDesign(a Assumptions) (builtDesign, error) {
	c := a.Config
	b := builtDesign{name: a.Design}
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
		seed = triplet.Mix64(a.Seed ^ 5)
	}
	var err error
	b.BuiltDesign, err = simulate.BuildDesign(sp, simulate.Estimator{}, seed, triplet.Mix64(a.Seed^6))
	return b, err
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
