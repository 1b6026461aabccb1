// Package projection answers "how many more answers?": it fits the
// learning curve of an embedding — held-out error e against the number of
// answers n — with a power law with an asymptote,
//
//	e(n) = a + b·n^(−c),
//
// the inverse power law that fits learning curves of many learners
// (Cortes et al. 1994, "Learning curves: asymptotic values and rate of
// convergence", NIPS 6; Figueroa et al. 2012, "Predicting sample size
// required for classification performance", BMC Med Inform Decis Mak
// 12:8, who fit it by nonlinear weighted least squares), by nonlinear
// least squares, and gives the error expected at N answers and the
// answers needed for an error E, each with a bootstrap interval.
package projection

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// Point is one point of a learning curve.
type Point struct {
	Answers int
	Error   float64
}

// Defaults of Options.
const (
	DefaultReps  = 200
	DefaultLevel = 0.8
	// DefaultPoints and DefaultRatio place a curve's points (Sizes): 8
	// points from an eighth of the answers to all of them. From a
	// sixteenth, the first points (a few answers per item) bend away from
	// the power law and the projection falls low (docs/reproductions.md,
	// issue 28).
	DefaultPoints = 8
	DefaultRatio  = 8
	// MinPoints is the fewest points a curve is fitted to: three
	// parameters and at least one residual.
	MinPoints = 4
)

// Options configure FitCurve. Zero values take the defaults.
type Options struct {
	// Reps is the number of bootstrap refits of the curve (default
	// DefaultReps).
	Reps int
	// Level is the coverage of the intervals (default DefaultLevel, 80%).
	Level float64
	// Seed makes the bootstrap reproducible.
	Seed uint64
	// Weighted weighs each point by its answers over the most answers
	// (Figueroa et al. 2012 weigh by sample size too): the power law
	// describes the curve's tail, and the first points, where the items
	// have few answers each, bend away from it.
	Weighted bool
}

// Curve is a fitted learning curve e(n) = A + B·n^(−C).
type Curve struct {
	A, B, C float64
	Points  []Point
	Level   float64
	// reps are the bootstrap refits (a, b, c) and noise the residual drawn
	// with each, for prediction intervals.
	reps  [][3]float64
	noise []float64
}

// Estimate is a value with its interval at the curve's Level.
type Estimate struct {
	Value, Low, High float64
}

// FitCurve fits e(n) = a + b·n^(−c) to the points by least squares (a ≥ 0,
// c > 0):
// for fixed c the best a and b are a linear regression, so c is first
// found on a grid of 60 values in [0.02, 4], then (a, b, log c) refined by
// BFGS (gonum/optimize) from there, keeping the better of the two.
//
// The interval comes from a residual bootstrap (Efron and Tibshirani
// 1993, sec. 9.5): Reps times, the fitted values plus residuals drawn with
// replacement (inflated by √(k/(k−3)) for the three fitted parameters of
// k points) are refitted; each refit also draws one residual as the noise
// of a new measurement, so ErrorAt gives a prediction interval for a
// measured held-out error rather than for the curve alone.
func FitCurve(points []Point, opt Options) (*Curve, error) {
	if opt.Reps == 0 {
		opt.Reps = DefaultReps
	}
	if opt.Level == 0 {
		opt.Level = DefaultLevel
	}
	switch {
	case len(points) < MinPoints:
		return nil, fmt.Errorf("learning curve: %d points, need %d", len(points), MinPoints)
	case opt.Reps < 10 || opt.Reps > 100000:
		return nil, fmt.Errorf("learning curve: %d bootstrap refits outside 10..100000", opt.Reps)
	case !(opt.Level > 0 && opt.Level < 1):
		return nil, fmt.Errorf("learning curve: level %g outside (0, 1)", opt.Level)
	}
	ns := make([]float64, len(points))
	ys := make([]float64, len(points))
	for i, p := range points {
		if p.Answers < 1 || math.IsNaN(p.Error) || math.IsInf(p.Error, 0) {
			return nil, fmt.Errorf("learning curve: point %d (%d answers, error %g) is not usable", i, p.Answers, p.Error)
		}
		ns[i], ys[i] = float64(p.Answers), p.Error
	}
	k := len(points)
	w := make([]float64, k)
	nmax := slices.Max(ns)
	for i := range k {
		w[i] = 1
		if opt.Weighted {
			w[i] = ns[i] / nmax
		}
	}
	a, b, c, err := fitPowerLaw(ns, ys, w)
	if err != nil {
		return nil, err
	}
	infl := math.Sqrt(float64(k) / float64(k-3))
	// res are the standardised residuals √w·r; a draw is put back at
	// point i as r/√w_i, and a new measurement at N answers gets its
	// noise at weight N/nmax (at most 1).
	res := make([]float64, k)
	fitted := make([]float64, k)
	for i := range k {
		fitted[i] = a + b*math.Pow(ns[i], -c)
		res[i] = infl * math.Sqrt(w[i]) * (ys[i] - fitted[i])
	}
	cv := &Curve{A: a, B: b, C: c, Points: slices.Clone(points), Level: opt.Level}
	rng := triplet.NewRand(triplet.Mix64(opt.Seed ^ 0x6375727665)) // "curve"
	yb := make([]float64, k)
	for range opt.Reps {
		for i := range k {
			yb[i] = fitted[i] + res[rng.IntN(k)]/math.Sqrt(w[i])
		}
		noise := res[rng.IntN(k)]
		ra, rb, rc, err := fitPowerLaw(ns, yb, w)
		if err != nil {
			continue
		}
		cv.reps = append(cv.reps, [3]float64{ra, rb, rc})
		cv.noise = append(cv.noise, noise)
	}
	if len(cv.reps) < opt.Reps/2 {
		return nil, errors.New("learning curve: most bootstrap refits failed")
	}
	return cv, nil
}

// Error returns the fitted curve's error at n answers.
func (c *Curve) Error(n float64) float64 { return c.A + c.B*math.Pow(n, -c.C) }

// ErrorAt returns the held-out error expected at n answers, with the
// interval (at Level) within which a measured error should fall.
func (c *Curve) ErrorAt(n float64) Estimate {
	v := make([]float64, len(c.reps))
	for i, r := range c.reps {
		v[i] = r[0] + r[1]*math.Pow(n, -r[2]) + c.noise[i]
	}
	lo, hi := embed.Percentiles(v, c.Level)
	return Estimate{Value: c.Error(n), Low: lo, High: hi}
}

// AnswersFor returns the number of answers at which the curve reaches
// the error e: n = ((e − a)/b)^(−1/c), +Inf when e is at or below the
// asymptote a (no number of answers reaches it), and the interval of
// that number over the bootstrap refits (the curve's uncertainty, not a
// single measurement's noise); an end of the interval may be +Inf.
func (c *Curve) AnswersFor(e float64) Estimate {
	v := make([]float64, len(c.reps))
	for i, r := range c.reps {
		v[i] = answersFor(r[0], r[1], r[2], e)
	}
	lo, hi := embed.Percentiles(v, c.Level)
	return Estimate{Value: answersFor(c.A, c.B, c.C, e), Low: lo, High: hi}
}

func answersFor(a, b, c, e float64) float64 {
	if !(e > a) || !(b > 0) {
		return math.Inf(1)
	}
	return math.Pow((e-a)/b, -1/c)
}

// linear returns the weighted least-squares a, b of y ≈ a + b·x and the
// weighted residual sum of squares.
func linear(x, y, w []float64) (a, b, sse float64) {
	var sw, sx, sy, sxx, sxy float64
	for i := range x {
		sw += w[i]
		sx += w[i] * x[i]
		sy += w[i] * y[i]
		sxx += w[i] * x[i] * x[i]
		sxy += w[i] * x[i] * y[i]
	}
	den := sw*sxx - sx*sx
	if den == 0 {
		a = sy / sw
	} else {
		b = (sw*sxy - sx*sy) / den
		a = (sy - b*sx) / sw
	}
	for i := range x {
		r := y[i] - a - b*x[i]
		sse += w[i] * r * r
	}
	return a, b, sse
}

// through0 returns the weighted least-squares b of y ≈ b·x (a = 0) and
// the weighted residual sum of squares.
func through0(x, y, w []float64) (a, b, sse float64) {
	var sxx, sxy float64
	for i := range x {
		sxx += w[i] * x[i] * x[i]
		sxy += w[i] * x[i] * y[i]
	}
	if sxx > 0 {
		b = sxy / sxx
	}
	for i := range x {
		r := y[i] - b*x[i]
		sse += w[i] * r * r
	}
	return 0, b, sse
}

// fitPowerLaw fits y ≈ a + b·n^(−c) (see FitCurve).
func fitPowerLaw(ns, ys, w []float64) (a, b, c float64, err error) {
	x := make([]float64, len(ns))
	best := math.Inf(1)
	for g := range 60 {
		cg := 0.02 * math.Pow(200, float64(g)/59) // 0.02 .. 4
		for i, n := range ns {
			x[i] = math.Pow(n, -cg)
		}
		ga, gb, sse := linear(x, ys, w)
		if ga < 0 { // an error rate's asymptote is not negative
			ga, gb, sse = through0(x, ys, w)
		}
		if sse < best {
			best, a, b, c = sse, ga, gb, cg
		}
	}
	if math.IsInf(best, 1) || math.IsNaN(best) {
		return 0, 0, 0, errors.New("learning curve: no fit")
	}
	// a = p[0]² keeps the asymptote non-negative.
	sse := func(p []float64) float64 {
		cc := math.Exp(p[2])
		var s float64
		for i, n := range ns {
			r := p[0]*p[0] + p[1]*math.Pow(n, -cc) - ys[i]
			s += w[i] * r * r
		}
		return s
	}
	grad := func(g, p []float64) {
		cc := math.Exp(p[2])
		g[0], g[1], g[2] = 0, 0, 0
		for i, n := range ns {
			np := math.Pow(n, -cc)
			r := w[i] * (p[0]*p[0] + p[1]*np - ys[i])
			g[0] += 4 * r * p[0]
			g[1] += 2 * r * np
			// d/d(log c) of b·n^(−c) = −b·n^(−c)·log(n)·c
			g[2] += 2 * r * (-p[1] * np * math.Log(n) * cc)
		}
	}
	res, ferr := optimize.Minimize(optimize.Problem{Func: sse, Grad: grad},
		[]float64{math.Sqrt(a), b, math.Log(c)}, &optimize.Settings{MajorIterations: 200}, &optimize.BFGS{})
	if ferr == nil || res != nil {
		if res != nil && res.F < best && !math.IsNaN(res.F) {
			a, b, c = res.X[0]*res.X[0], res.X[1], math.Exp(res.X[2])
		}
	}
	return a, b, c, nil
}
