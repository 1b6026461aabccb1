package dashboard

import (
	"cmp"
	"math"
	"slices"
)

// The figures of the dashboard's "Designs compared" section (issue 16): a
// study's arms judged on its held-out answers, run after run.

// ArmPoint is one arm's learning-curve point: a run's fit of the arm's
// Answers answers got Wrong of the study's Heldout held-out answers wrong.
type ArmPoint struct {
	Arm            int
	Answers        int
	Heldout, Wrong int
	Run            int64
}

// ArmCurve is one arm's learning curve: held-out error against the arm's
// answers, by answers. Heldout is the number of held-out answers each
// error was measured on.
type ArmCurve struct {
	Arm     int
	Answers []int
	Error   []float64
	Heldout []int
}

// ArmCurves returns the learning curve of each of arms arms (in arm
// order; an arm without points has an empty curve). Points without
// held-out answers are left out; of several points at the same number of
// answers (runs without new answers of the arm) the latest run's is kept.
func ArmCurves(points []ArmPoint, arms int) []ArmCurve {
	byArm := make([][]ArmPoint, arms)
	for _, p := range points {
		if p.Arm < 0 || p.Arm >= arms || p.Heldout <= 0 {
			continue
		}
		byArm[p.Arm] = append(byArm[p.Arm], p)
	}
	out := make([]ArmCurve, arms)
	for a, ps := range byArm {
		slices.SortStableFunc(ps, func(x, y ArmPoint) int {
			return cmp.Or(cmp.Compare(x.Answers, y.Answers), cmp.Compare(x.Run, y.Run))
		})
		c := ArmCurve{Arm: a}
		for i, p := range ps {
			if i+1 < len(ps) && ps[i+1].Answers == p.Answers {
				continue // a later run at the same answers
			}
			c.Answers = append(c.Answers, p.Answers)
			c.Error = append(c.Error, float64(p.Wrong)/float64(p.Heldout))
			c.Heldout = append(c.Heldout, p.Heldout)
		}
		out[a] = c
	}
	return out
}

// Comparison is the arms' held-out errors at one number of answers each:
// the most answers every arm with a curve reached (Answers; 0 when fewer
// than two arms have a curve), each arm's error there (Error, NaN for an
// arm without a curve) read off its curve by linear interpolation between
// the points around it, and the standard error of such an error measured
// on Heldout held-out answers (SE, at the mean of the errors): two arms
// whose errors differ by less than about twice SE are not told apart by
// the held-out answers yet.
type Comparison struct {
	Answers int
	Error   []float64
	Heldout int
	SE      float64
}

// Compare compares the curves at the most answers all of them reached.
func Compare(curves []ArmCurve) Comparison {
	c := Comparison{Error: make([]float64, len(curves))}
	common, with := math.MaxInt, 0
	for _, cv := range curves {
		if len(cv.Answers) == 0 {
			continue
		}
		with++
		common = min(common, cv.Answers[len(cv.Answers)-1])
		c.Heldout = max(c.Heldout, cv.Heldout[len(cv.Heldout)-1])
	}
	for i := range c.Error {
		c.Error[i] = math.NaN()
	}
	if with < 2 {
		return Comparison{Error: c.Error}
	}
	c.Answers = common
	sum, k := 0.0, 0
	for i, cv := range curves {
		if len(cv.Answers) == 0 {
			continue
		}
		c.Error[i] = interpolate(cv.Answers, cv.Error, common)
		if !math.IsNaN(c.Error[i]) {
			sum += c.Error[i]
			k++
		}
	}
	if k > 0 && c.Heldout > 0 {
		e := sum / float64(k)
		c.SE = math.Sqrt(e * (1 - e) / float64(c.Heldout))
	}
	return c
}

// interpolate reads y at x off the polyline (xs, ys), xs ascending; NaN
// when x is below its first point.
func interpolate(xs []int, ys []float64, x int) float64 {
	i, found := slices.BinarySearch(xs, x)
	switch {
	case found:
		return ys[i]
	case i == 0:
		return math.NaN()
	case i == len(xs):
		return ys[len(ys)-1]
	}
	t := float64(x-xs[i-1]) / float64(xs[i]-xs[i-1])
	return ys[i-1] + t*(ys[i]-ys[i-1])
}
