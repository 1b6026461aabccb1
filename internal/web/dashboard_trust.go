package web

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// trustSettingsOf reads the settings form's trust fields (the dimension
// choice, bootstrap and projection bounds); a form without them (an older
// page) keeps the study's stored ones. ok is false when a field present is
// not a number.
func (s *Server) trustSettingsOf(r *http.Request, studyID int64, num func(string) (float64, bool)) (study.TrustSettings, bool, error) {
	if _, present := r.PostForm["trust_max_dim"]; !present {
		rs, err := s.store.RecomputeSettings(r.Context(), studyID)
		return rs.Trust, true, err
	}
	maxDim, ok1 := num("trust_max_dim")
	folds, ok2 := num("trust_folds")
	reps, ok3 := num("bootstrap_reps")
	target, ok4 := num("target_error_pct")
	if strings.TrimSpace(r.PostFormValue("target_error_pct")) == "" {
		target, ok4 = 0, true
	}
	t := study.TrustSettings{MaxDim: int(maxDim), Folds: int(folds), Bootstrap: int(reps),
		Project: r.PostFormValue("project") != "", TargetError: target / 100}
	return t, ok1 && ok2 && ok3 && ok4, nil
}

// trustView formats the shown run's dimension choice, uncertainty and
// projection (t nil: none) for the dashboard; pc is the study's pace and
// pay, for the projection's participants, minutes and pay.
func trustView(t *analysis.Trust, pc pace) *templates.TrustView {
	if t == nil {
		return nil
	}
	v := &templates.TrustView{Notes: t.Notes}
	if d := t.Dimensions; d != nil && len(d.Rows) > 0 {
		v.Dimensions = dimensionsView(d)
	}
	if u := t.Uncertainty; u != nil {
		v.Uncertainty = uncertaintyView(u)
	}
	if p := t.Projection; p != nil {
		v.Projection = projectionView(p, pc)
	}
	return v
}

func dimensionsView(d *analysis.DimensionChoice) *templates.DimensionsView {
	v := &templates.DimensionsView{Suggested: d.Suggested}
	pts := make([]plot.ErrorPoint, len(d.Rows))
	var best, sugg analysis.DimensionRow
	for i, r := range d.Rows {
		se := math.NaN()
		row := templates.DimensionRow{Dim: r.Dim, Error: format.Percent(r.Mean, 1), SE: "–", Train: format.Percent(r.Train, 1),
			Suggested: r.Dim == d.Suggested, Best: r.Dim == d.Best, Fit: r.Dim == d.Fitted}
		if r.SE != nil {
			se = *r.SE
			row.SE = format.Percent(se, 1)
		}
		pts[i] = plot.ErrorPoint{X: float64(r.Dim), Y: r.Mean, Err: se}
		v.Rows = append(v.Rows, row)
		if r.Dim == d.Best {
			best = r
		}
		if r.Dim == d.Suggested {
			sugg = r
		}
	}
	v.SVG = templ.Raw(plot.ErrorBars(pts, float64(d.Suggested), "suggested", 430, 260, "dimensions d", "held-out error (share wrong)",
		"held-out error against the embedding's dimensions"))
	if d.Suggested == d.Best {
		v.Sentence = fmt.Sprintf("Suggested: d = %d, the dimension with the lowest held-out error (%s) over %d-fold cross-validation of %s answers.",
			d.Suggested, format.Percent(sugg.Mean, 1), d.Folds, format.Thousands(int64(d.Answers)))
	} else {
		v.Sentence = fmt.Sprintf("Suggested: d = %d, the fewest dimensions whose held-out error (%s) is within one standard error of the lowest (d = %d, %s ± %s), over %d-fold cross-validation of %s answers: more dimensions do not predict unseen answers measurably better.",
			d.Suggested, format.Percent(sugg.Mean, 1), d.Best, format.Percent(best.Mean, 1), seText(best.SE), d.Folds, format.Thousands(int64(d.Answers)))
	}
	if d.Fitted == d.Suggested {
		v.Pinned = fmt.Sprintf("The embedding, plots and exports use d = %d, the study's \"Embedding dimensions\" setting.", d.Fitted)
	} else {
		v.Pinned = fmt.Sprintf("The embedding, plots and exports use d = %d, the study's \"Embedding dimensions\" setting, which pins it; set it to %d below to follow the suggestion.", d.Fitted, d.Suggested)
	}
	v.Pinned += " Each fold's fit is " + strings.ToUpper(d.Method) + ", whose kernel is the same in every dimension (the one-standard-error rule: Hastie, Tibshirani and Friedman, The Elements of Statistical Learning, sec. 7.10)."
	return v
}

func seText(se *float64) string {
	if se == nil {
		return "–"
	}
	return format.Percent(*se, 1)
}

func uncertaintyView(u *analysis.Uncertainty) *templates.UncertaintyView {
	v := &templates.UncertaintyView{Method: fmt.Sprintf("%d bootstrap refits of the embedding on %s drawn with replacement, each rotated onto the embedding (orthogonal Procrustes). Ellipses on the embedding hold %s of an item's refitted positions (for a normal spread); the gallery's last column says how often each neighbour stays among the item's %d nearest.",
		u.Reps, u.Resampled, format.Percent(0.9, 0), len(firstNonEmpty(u.Neighbours)))}
	if u.HeldoutError != nil && u.ErrorLow != nil && u.ErrorHigh != nil {
		v.Error = fmt.Sprintf("Held-out error %s (%s interval %s–%s).", format.Percent(*u.HeldoutError, 1),
			format.Percent(u.Level, 0), format.Percent(*u.ErrorLow, 1), format.Percent(*u.ErrorHigh, 1))
	}
	spread, stab := median(u.Spread), median(u.Stability)
	v.Spread = fmt.Sprintf("An item moves by %.3f of the map's radius from refit to refit (median over the items; the radius is the items' root-mean-square distance from the centre); %s of an item's nearest neighbours stay its neighbours (median).",
		spread, format.Percent(stab, 0))
	return v
}

func firstNonEmpty(v [][]int) []int {
	for _, x := range v {
		if len(x) > 0 {
			return x
		}
	}
	return nil
}

// median is the median of v (NaN for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// roundAnswers rounds a number of answers to two significant digits, as
// a projection deserves.
func roundAnswers(x float64) string {
	if x < 100 {
		return format.Thousands(int64(math.Round(x)))
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	return format.Thousands(int64(math.Round(x/p) * p))
}

// levelledOff is the gap between the held-out error now and the learning
// curve's asymptote below which the projection says the curve has levelled
// off (half a percentage point: about one standard error of an error near
// 20% measured on 6,000 held-out answers) instead of counting answers
// towards a target within it.
const levelledOff = 0.005

func projectionView(p *analysis.Projection, pc pace) *templates.ProjectionView {
	v := &templates.ProjectionView{}
	target := format.Percent(p.Target, 1)
	why := ""
	if p.TargetAuto {
		why = fmt.Sprintf(", halfway to the %s the curve levels off at", format.Percent(p.A, 1))
	}
	switch m := p.More; {
	case p.Now-p.A < levelledOff:
		v.Sentence = fmt.Sprintf("The learning curve has levelled off: the held-out error is %s and the curve's floor %s, so more answers like these will barely lower it (better answers might: clearer instructions, fewer careless participants).",
			format.Percent(p.Now, 1), format.Percent(p.A, 1))
		if !p.TargetAuto && m.Value != nil && *m.Value > 0 {
			v.Sentence += fmt.Sprintf(" To reach the target %s: about %s more answers.", target, roundAnswers(*m.Value))
		}
	case m.Value == nil:
		v.Sentence = fmt.Sprintf("The learning curve levels off at %s: no number of answers like these is projected to bring the held-out error from %s to %s.",
			format.Percent(p.A, 1), format.Percent(p.Now, 1), target)
	case *m.Value == 0:
		v.Sentence = fmt.Sprintf("The held-out error (%s) is at the target %s already.", format.Percent(p.Now, 1), target)
	default:
		people := ""
		cost, how := pc.answersCost(*m.Value)
		if cost != "" {
			people = " (" + cost + ")"
		}
		hi := "never"
		if m.High != nil {
			hi = roundAnswers(*m.High)
		}
		lo := "none"
		if m.Low != nil && *m.Low > 0 {
			lo = roundAnswers(*m.Low)
		}
		v.Sentence = fmt.Sprintf("About %s more answers%s to bring the held-out error from %s to %s%s (%s interval: %s to %s more answers%s).",
			roundAnswers(*m.Value), people, format.Percent(p.Now, 1), target, why, format.Percent(p.Level, 0), lo, hi, pc.rangeCost(m.Low, m.High))
		v.Cost = how
	}
	if t := p.Twice; t.Value != nil && t.Low != nil && t.High != nil {
		v.Twice = fmt.Sprintf("With twice the answers (%s in all), the held-out error should be about %s (%s interval %s–%s).",
			format.Thousands(int64(2*p.Answers)), format.Percent(*t.Value, 1), format.Percent(p.Level, 0), format.Percent(*t.Low, 1), format.Percent(*t.High, 1))
	}
	v.Curve = fmt.Sprintf("From %d fits of the first answers in the order they came (held-out error e against answers n), fitted by e(n) = a + b·n^(−c) with a = %s, c = %.2f (Cortes et al. 1994; Figueroa et al. 2012); the interval is a residual bootstrap of the fit.",
		len(p.Points), format.Percent(p.A, 1), p.C)
	// The curve in answers of the study (training answers × answers/train).
	v.SVG = templ.Raw(learningCurveSVG(p))
	return v
}

// learningCurveSVG draws the projection's learning curve in answers of the
// study (training answers × answers/train): the measured points with each
// one's 95% Wilson interval on the held-out answers (when the run stored
// their number), and the fitted curve to twice the answers with its
// prediction interval (when the run stored it).
func learningCurveSVG(p *analysis.Projection) string {
	r := float64(p.Answers) / float64(max(p.Train, 1))
	meas := plot.Series{Class: "s1", Legend: "measured"}
	fit := plot.Series{Class: "s2", Legend: "fitted, projected", NoMarkers: true}
	for _, q := range p.Points {
		meas.X, meas.Y = append(meas.X, float64(q.Train)*r), append(meas.Y, q.Error)
		if p.Test > 0 {
			lo, hi := dashboard.Wilson(int(math.Round(q.Error*float64(p.Test))), p.Test, dashboard.Z95)
			meas.Low, meas.High = append(meas.Low, lo), append(meas.High, hi)
		}
	}
	switch {
	case len(p.Band) > 0:
		for _, b := range p.Band {
			fit.X, fit.Y = append(fit.X, b.Train*r), append(fit.Y, b.Error)
			fit.Low, fit.High = append(fit.Low, b.Low), append(fit.High, b.High)
		}
		fit.Legend = fmt.Sprintf("fitted, projected (%s interval)", format.Percent(p.Level, 0))
	case len(p.Points) > 0:
		lo, hi := float64(p.Points[0].Train), 2*float64(p.Train)
		for k := range analysis.BandPoints {
			n := lo * math.Pow(hi/lo, float64(k)/(analysis.BandPoints-1))
			fit.X, fit.Y = append(fit.X, n*r), append(fit.Y, p.A+p.B*math.Pow(n, -p.C))
		}
	}
	if p.Test > 0 {
		meas.Legend = "measured (95% interval)"
	}
	return plot.Lines([]plot.Series{meas, fit}, 640, 260, "answers collected", "held-out error (share wrong)", false, "learning curve with its fit and intervals")
}
