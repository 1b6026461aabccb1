package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/dimension"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/projection"
	"github.com/closer-lab/closer/internal/triplet"
	"github.com/closer-lab/closer/internal/uncertainty"
)

// TrustSettings bound what a recompute computes beyond the embedding so
// that a researcher can trust and act on it (issue 28). Zero values turn
// each part off; a study's defaults are study.DefaultRecomputeSettings'.
type TrustSettings struct {
	// MaxDim is the largest dimension the dimension choice tries (d =
	// 1..MaxDim by Folds-fold cross-validation); 0 skips it. Its cost is
	// MaxDim·Folds fits of the training answers with dimension's method.
	MaxDim int
	// Folds is the number of cross-validation folds (0: dimension's
	// default).
	Folds int
	// Bootstrap is the number of bootstrap replicates of the embedding
	// (warm-started from it, at most uncertainty.DefaultMaxIter
	// iterations each); 0 skips the uncertainty.
	Bootstrap int
	// Projection fits the learning curve over the training answers (8
	// fits of growing prefixes) and projects the answers still needed.
	Projection bool
	// TargetError is the held-out error the projection asks the answers
	// for; 0 (automatic) halves the gap between the error now and the
	// curve's asymptote.
	TargetError float64
	// MaxAnswers caps the training answers the dimension choice and the
	// bootstrap fit (0: no cap): beyond it they run on a seeded random
	// subset of that many, so their cost stops growing with the study.
	// The bootstrap's spread is then that of a study of MaxAnswers
	// answers, larger than the whole study's.
	MaxAnswers int
	// Workers bounds the goroutines the parts' fits use (0: GOMAXPROCS).
	// Their results do not depend on it; the app sets 1 so that a
	// recompute in the serving process leaves the other cores to requests.
	Workers int
}

// Enabled reports whether any part is on.
func (t TrustSettings) Enabled() bool { return t.MaxDim > 0 || t.Bootstrap > 0 || t.Projection }

// Trust is what a run computes to judge and extend its embedding: the
// dimension choice, the embedding's bootstrap uncertainty and the
// projection of the held-out error with more answers. A part the settings
// turned off, or that the answers are too few for, is nil, with the reason
// in Notes.
type Trust struct {
	Dimensions  *DimensionChoice `json:"dimensions,omitempty"`
	Uncertainty *Uncertainty     `json:"uncertainty,omitempty"`
	Projection  *Projection      `json:"projection,omitempty"`
	Notes       []string         `json:"notes,omitempty"`
}

// subset returns at most k of the answers ts (with their groups), a
// seeded random choice in their order, or all of them when k is 0 or not
// fewer.
func subset(ts []triplet.Triplet, groups []int, k int, seed uint64) ([]triplet.Triplet, []int) {
	if k <= 0 || len(ts) <= k {
		return ts, groups
	}
	keep := triplet.NewRand(triplet.Mix64(seed ^ 0x737562736574)).Perm(len(ts))[:k] // "subset"
	slices.Sort(keep)
	out := make([]triplet.Triplet, k)
	var g []int
	if groups != nil {
		g = make([]int, k)
	}
	for i, j := range keep {
		out[i] = ts[j]
		if groups != nil {
			g[i] = groups[j]
		}
	}
	return out, g
}

// DimensionChoice is dimension.CrossValidate's table: the held-out error
// against d with its standard error, and the dimension the one-standard-
// error rule suggests (ESL 2nd ed., sec. 7.10, p. 244). Fitted is the
// dimension the run's embedding has (the study's setting, which pins it).
type DimensionChoice struct {
	Method    string         `json:"method"`
	Folds     int            `json:"folds"`
	Answers   int            `json:"answers"`
	Rows      []DimensionRow `json:"rows"`
	Best      int            `json:"best"`
	Suggested int            `json:"suggested"`
	Fitted    int            `json:"fitted"`
}

// DimensionRow is one dimension's mean held-out error over the folds, its
// standard error and the mean training error.
type DimensionRow struct {
	Dim   int      `json:"dim"`
	Mean  float64  `json:"mean"`
	SE    *float64 `json:"se"`
	Train float64  `json:"train"`
}

// Uncertainty is uncertainty.Bootstrap of the run's embedding: per item,
// the RMS distance of its aligned replicate positions from its position
// (Spread, in the stored embedding's units: unit RMS radius) and the
// covariance of its first two coordinates (Cov: xx, xy, yy; the ellipse on
// the scatter); its nearest neighbours in the embedding with how often each
// recurs among its nearest in a replicate (Stability is their mean); and
// the held-out error with its interval at Level (uncertainty's
// CentredInterval).
type Uncertainty struct {
	Reps          int          `json:"reps"`
	Resampled     string       `json:"resampled"` // "participants" or "answers"
	Level         float64      `json:"level"`
	Spread        []float64    `json:"spread"`
	Cov           [][3]float64 `json:"cov"`
	Neighbours    [][]int      `json:"neighbours"`
	NeighbourFreq [][]float64  `json:"neighbour_freq"`
	Stability     []float64    `json:"stability"`
	HeldoutError  *float64     `json:"heldout_error"`
	ErrorLow      *float64     `json:"error_low"`
	ErrorHigh     *float64     `json:"error_high"`
}

// Projection is the learning curve e(n) = A + B·n^(−C) fitted to the
// held-out error of fits of the first n training answers (projection.
// FitCurve; Cortes et al. 1994) and what it says about more answers. The
// curve counts training answers; More and its interval count answers of
// the study (training answers times Answers/Train, since a share of every
// answer is held out). Nil interval ends are "never" (the curve levels off
// above the target) or unknown.
type Projection struct {
	Points []CurvePoint `json:"points"`
	A      float64      `json:"a"`
	B      float64      `json:"b"`
	C      float64      `json:"c"`
	Level  float64      `json:"level"`
	// Answers and Train are the run's answers and its training answers;
	// Now is the curve's error at Train.
	Answers int     `json:"answers"`
	Train   int     `json:"train"`
	Now     float64 `json:"now"`
	// Target is the error asked for (TargetAuto: chosen as halfway from
	// Now to the asymptote A); More the answers still needed for it.
	Target     float64  `json:"target"`
	TargetAuto bool     `json:"target_auto"`
	More       Interval `json:"more"`
	// Twice is the held-out error expected with twice the answers, with
	// its prediction interval (the interval issue 28 checks).
	Twice Interval `json:"twice"`
	// Test is the number of held-out answers each point's error was
	// measured on (0 in runs before it was stored).
	Test int `json:"test,omitempty"`
	// Band is the fitted curve with its prediction interval (at Level)
	// from the first point's training answers to twice Train, for the
	// plot's band (none in runs before it was stored).
	Band []BandPoint `json:"band,omitempty"`
}

// BandPoints is the number of points of Projection.Band.
const BandPoints = 9

// BandPoint is the learning curve's fitted error at Train training
// answers with its prediction interval.
type BandPoint struct {
	Train float64 `json:"train"`
	Error float64 `json:"error"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// CurvePoint is one point of the projection's learning curve.
type CurvePoint struct {
	Train int     `json:"train"`
	Error float64 `json:"error"`
}

// Interval is an estimate with its interval; a nil end is unknown or, for
// a number of answers, never.
type Interval struct {
	Value *float64 `json:"value"`
	Low   *float64 `json:"low"`
	High  *float64 `json:"high"`
}

// Trust stage names, appended to Stages when the part is on.
const (
	StageDimensions  = "dimensions"
	StageUncertainty = "uncertainty"
	StageProjection  = "projection"
)

// finite returns &x, or nil for NaN and infinities (JSON has neither).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func intervalOf(e projection.Estimate) Interval {
	return Interval{Value: finite(e.Value), Low: finite(e.Low), High: finite(e.High)}
}

// MaxMDSItems is the most items whose dimension choice fits its folds from
// embed's default start, classical MDS: its dense eigendecomposition of the
// n × n dissimilarities is O(n³), 4.6–5.7 s for 1,000 items on the shared
// 2-core machine against 0.16 s for a whole 5-D STE fit from a random start
// of 16,000 answers (which reached a training error of 0.038 against
// MDS's 0.040). Beyond it the 25 folds start at random: STE, the folds'
// method, reached the best held-out error from its random start in 1-D and
// 2-D (docs/reproductions.md, issue 28), unlike t-STE and CKL.
const MaxMDSItems = 500

// minTrustAnswers is the fewest training answers the trust parts are
// computed for: below, a fold or a curve prefix holds a handful of answers
// and its error says nothing.
const minTrustAnswers = 100

// trust computes the parts of t for the embedding fit (the method's own
// scale) of train over n items, judged on test; groups names the
// participant of each training answer (nil: unknown). stage, if not nil,
// marks the start of a part by its name and returns the time.
func trust(ctx context.Context, n int, train, test []triplet.Triplet, groups []int, fit *mat.Dense, s Settings,
	stage func(string) func()) (*Trust, error) {
	t := s.Trust
	out := &Trust{}
	if len(train) < minTrustAnswers {
		out.Notes = append(out.Notes, fmt.Sprintf("The dimension choice, uncertainty and projection need at least %d training answers (%d so far).", minTrustAnswers, len(train)))
		return out, nil
	}
	cvTrain, cvGroups := subset(train, groups, t.MaxAnswers, s.Seed)
	if len(cvTrain) < len(train) {
		out.Notes = append(out.Notes, fmt.Sprintf("The dimension choice and the uncertainty used a random %d of the %d training answers (the study's cap on their cost), so the spread shown is that of a smaller study.", len(cvTrain), len(train)))
	}
	// A part that fails leaves a note and the others go on; a cancelled
	// ctx ends the run.
	failed := func(part string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out.Notes = append(out.Notes, part+" failed: "+err.Error())
		return nil
	}
	if t.MaxDim > 0 {
		done := stage(StageDimensions)
		folds := t.Folds
		if folds == 0 {
			folds = dimension.DefaultFolds
		}
		cvFit := embed.Options{Seed: s.Seed, Workers: t.Workers}
		if n > MaxMDSItems {
			cvFit.Start = embed.StartRandom
		}
		cv, err := dimension.CrossValidate(ctx, n, cvTrain, dimension.Options{
			Fit: cvFit, MaxDim: min(t.MaxDim, n-1), Folds: folds, Workers: t.Workers})
		if err != nil {
			if err := failed("The dimension choice", err); err != nil {
				return nil, err
			}
		} else {
			dc := &DimensionChoice{Method: string(dimension.DefaultMethod), Folds: cv.Folds, Answers: cv.Answers,
				Best: cv.Best, Suggested: cv.Suggested, Fitted: s.Dim}
			for _, r := range cv.Rows {
				dc.Rows = append(dc.Rows, DimensionRow{Dim: r.Dim, Mean: r.Mean, SE: finite(r.SE), Train: r.Train})
			}
			out.Dimensions = dc
		}
		done()
	}
	if t.Bootstrap > 0 {
		done := stage(StageUncertainty)
		if t.Bootstrap < 2 {
			return nil, fmt.Errorf("trust: %d bootstrap replicates, need 2 or none", t.Bootstrap)
		}
		b, err := uncertainty.Bootstrap(ctx, n, cvTrain, fit, uncertainty.Options{
			Fit:  embed.Options{Method: s.Method, Dim: s.Dim, Seed: s.Seed, Workers: t.Workers},
			Reps: t.Bootstrap, Workers: t.Workers, Groups: cvGroups, Test: test, K: s.Neighbours})
		if err != nil {
			if err := failed("The uncertainty", err); err != nil {
				return nil, err
			}
		} else {
			out.Uncertainty = uncertaintyOf(b, groups != nil, s.Dim, n)
		}
		done()
	}
	if t.Projection {
		sizes := projection.Sizes(len(train), projection.DefaultPoints, projection.DefaultRatio)
		switch {
		case len(test) == 0:
			out.Notes = append(out.Notes, "The projection needs held-out answers.")
		case len(sizes) < projection.MinPoints:
			out.Notes = append(out.Notes, "Too few answers for a learning curve.")
		default:
			done := stage(StageProjection)
			p, err := project(ctx, n, train, test, sizes, s)
			if err != nil {
				if err := failed("The projection", err); err != nil {
					return nil, err
				}
			} else {
				out.Projection = p
			}
			done()
		}
	}
	return out, nil
}

// uncertaintyOf is b as stored: the covariances of the first two
// coordinates.
func uncertaintyOf(b *uncertainty.Result, byParticipant bool, dim, n int) *Uncertainty {
	u := &Uncertainty{Reps: b.Reps, Resampled: "answers", Level: uncertainty.DefaultLevel, Spread: b.RMS,
		Cov: make([][3]float64, n), Neighbours: b.Neighbours, NeighbourFreq: b.NeighbourFreq, Stability: b.Stability,
		HeldoutError: finite(b.HeldoutError), ErrorLow: finite(b.ErrorLow), ErrorHigh: finite(b.ErrorHigh)}
	if byParticipant {
		u.Resampled = "participants"
	}
	for i, c := range b.Cov {
		u.Cov[i][0] = c.At(0, 0)
		if dim > 1 {
			u.Cov[i][1], u.Cov[i][2] = c.At(0, 1), c.At(1, 1)
		}
	}
	return u
}

// project measures the learning curve of train (in collected order) at
// sizes on test, fits it and projects the answers for the target error
// and the error at twice the answers.
func project(ctx context.Context, n int, train, test []triplet.Triplet, sizes []int, s Settings) (*Projection, error) {
	pts, err := projection.Measure(ctx, n, train, test, sizes,
		embed.Options{Method: s.Method, Dim: s.Dim, Seed: s.Seed, MaxIter: s.MaxIter, Workers: s.Trust.Workers}, s.Trust.Workers)
	if err != nil {
		return nil, err
	}
	cv, err := projection.FitCurve(pts, projection.Options{Seed: s.Seed})
	if err != nil {
		return nil, err
	}
	m := len(train)
	p := &Projection{A: cv.A, B: cv.B, C: cv.C, Level: cv.Level, Train: m, Now: cv.Error(float64(m)),
		Target: s.Trust.TargetError}
	for _, q := range pts {
		p.Points = append(p.Points, CurvePoint{Train: q.Answers, Error: q.Error})
	}
	if p.Target <= 0 {
		p.Target, p.TargetAuto = cv.A+(p.Now-cv.A)/2, true
	}
	p.Twice = intervalOf(cv.ErrorAt(2 * float64(m)))
	p.Test = len(test)
	if len(pts) > 0 {
		lo, hi := float64(pts[0].Answers), 2*float64(m)
		for k := range BandPoints {
			x := lo * math.Pow(hi/lo, float64(k)/(BandPoints-1))
			e := cv.ErrorAt(x)
			if finite(e.Value) == nil || finite(e.Low) == nil || finite(e.High) == nil {
				continue // JSON has no NaN
			}
			p.Band = append(p.Band, BandPoint{Train: x, Error: e.Value, Low: e.Low, High: e.High})
		}
	}
	more := cv.AnswersFor(p.Target)
	// Answers still needed: training answers beyond m, none when the
	// curve is already there.
	toMore := func(x float64) float64 { return math.Max(0, x-float64(m)) }
	more.Value, more.Low, more.High = toMore(more.Value), toMore(more.Low), toMore(more.High)
	p.More = intervalOf(more)
	return p, nil
}

// scaleMore converts p's answers still needed from training answers to
// answers of the study (answers per training answer: answers/train).
func (p *Projection) scaleMore(answers int) {
	p.Answers = answers
	r := float64(answers) / float64(p.Train)
	for _, v := range []*float64{p.More.Value, p.More.Low, p.More.High} {
		if v != nil {
			*v = math.Round(*v * r)
		}
	}
}
