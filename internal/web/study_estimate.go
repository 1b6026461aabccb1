package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/estimate"
	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// defaultWrong is the simulated crowd's share of wrong answers before the
// researcher says otherwise (crowds of the papers behind closer: 5–20%).
const defaultWrong = 0.1

// estimateShare is the share of the request timeout an estimate may
// take: it runs inside the request, and the rest of the time is left for
// storing it and the redirect, so that an estimate slowed down by a busy
// machine ends in a clear 503 before the request timeout, never in it.
const estimateShare = 0.6

// estimateLimit is the time an estimate may take in a request with the
// given timeout.
func estimateLimit(timeout time.Duration) time.Duration {
	return time.Duration(float64(timeout) * estimateShare)
}

// estimateSlot lets one estimate run at a time in a process: each is
// bounded (estimate.MaxItems, estimate.MaxBudget: seconds at the bounds on
// 2 cores, an active study's the longest, its refits included; measure
// with estimate's BenchmarkRunAtCap), and two at once would share the
// cores with the requests.
var estimateSlot = make(chan struct{}, 1)

// estimateView builds the study page's "How many answers" section of
// study st with items items and answers answers: the costs form and the
// stored estimate.
func (s *Server) estimateView(ctx context.Context, st study.Study, items, answers int) (*templates.EstimateView, error) {
	pc, err := s.paceOf(ctx, st)
	if err != nil {
		return nil, err
	}
	stored, err := s.store.Estimate(ctx, st.ID)
	if err != nil {
		return nil, err
	}
	c := pc.Costs
	v := &templates.EstimateView{Slug: st.Slug, Can: canFrom(ctx), PayPerHour: strconv.FormatFloat(c.PayPerHour, 'f', -1, 64), Currency: c.Currency,
		Seconds: strconv.FormatFloat(c.SecondsPerQuestion, 'f', -1, 64), WrongPct: strconv.FormatFloat(100*defaultWrong, 'f', -1, 64),
		Opened: answers > 0}
	_, how := pc.answersCost(1)
	v.Pace = "The figures take " + how
	if stored == nil {
		return v, nil
	}
	var a estimate.Assumptions
	if err := json.Unmarshal(stored.Assumed, &a); err != nil {
		return nil, fmt.Errorf("estimate of study %d: %w", st.ID, err)
	}
	v.WrongPct = strconv.FormatFloat(100*a.Wrong, 'f', -1, 64)
	if a.Target > 0 {
		v.TargetPct = strconv.FormatFloat(100*a.Target, 'f', -1, 64)
	}
	v.When = "estimated " + stored.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
	if stored.Result == nil {
		v.Error = stored.Error
		return v, nil
	}
	var r estimate.Result
	if err := json.Unmarshal(stored.Result, &r); err != nil {
		return nil, fmt.Errorf("estimate of study %d: %w", st.ID, err)
	}
	v.Has = true
	v.Sentence = estimateSentence(&r, pc)
	v.Assumed = estimateAssumed(a, &r)
	v.SVG = templ.Raw(estimateSVG(&r))
	rs, err := s.store.RecomputeSettings(ctx, st.ID)
	if err != nil {
		return nil, err
	}
	dc, err := s.designConfigOf(ctx, st)
	if err != nil {
		return nil, err
	}
	v.Arms = estimateArms(&r)
	now := assumptionsOf(st, rs, dc, items)
	switch {
	case !sameStudy(now, a):
		v.Stale = fmt.Sprintf("The study's settings changed since this estimate (now %d items, %s, %d questions per participant, %s, %s in d = %d): estimate again.",
			now.Items, formatName(now.Format), now.Questions, designsOf(now), strings.ToUpper(now.Method), now.Dim)
	case r.Design == "" && a.Design != study.DesignRandom:
		v.Stale = fmt.Sprintf("This estimate simulated random questions, not the study's design (%s): estimate again to simulate the design.", a.Design)
	}
	return v, nil
}

// designConfigOf are the settings of the design an estimate simulates:
// the study's, or with arms its first arm's (st.Design is that arm's).
func (s *Server) designConfigOf(ctx context.Context, st study.Study) (study.DesignConfig, error) {
	if len(st.Arms) > 0 {
		return st.Arms[0].Config, nil
	}
	return s.store.DesignConfigOf(ctx, st.ID)
}

// assumptionsOf are the study's own settings as an estimate takes them:
// its items, question format, design with its settings dc (with arms,
// the first arm's) or its arms with theirs at their shares, questions per
// participant, held-out share and fit.
func assumptionsOf(st study.Study, rs study.RecomputeSettings, dc study.DesignConfig, items int) estimate.Assumptions {
	method := rs.Method
	if method == "" {
		method = "tste"
	}
	a := estimate.Assumptions{Items: items, Design: st.Design, Questions: st.QuestionsPerParticipant, Method: method, Dim: max(rs.Dim, 1),
		Seed: uint64(st.ID), HeldoutShare: st.HeldoutShare}
	if f := study.MustStudyFormat(st.Format); f.Format != study.FormatTriplet {
		a.Format = f.String() // a triplet study's is "", as an estimate stored before formats were simulated has it
	}
	a.Config = estimateConfig(st.Design, dc)
	if len(st.Arms) > 0 {
		a.Design, a.Config = st.Arms[0].Design, estimateConfig(st.Arms[0].Design, st.Arms[0].Config)
		for _, arm := range st.Arms {
			a.Arms = append(a.Arms, estimate.Arm{Name: arm.Name, Design: arm.Design, Config: estimateConfig(arm.Design, arm.Config), Share: arm.Share})
		}
	}
	return a
}

// estimateConfig is a design's settings as an estimate takes them (none
// for the random design).
func estimateConfig(design string, dc study.DesignConfig) estimate.DesignConfig {
	if !study.IsStateful(design) {
		return estimate.DesignConfig{}
	}
	c := estimate.DesignConfig{Seed: dc.Seed, Repeats: dc.Repeats, Landmarks: dc.Landmarks, LandmarkItems: dc.LandmarkItems,
		Extra: dc.Extra, Coordinates: dc.Coordinates, Warmup: dc.Warmup, Score: dc.Score, Model: dc.Model, Candidates: dc.Candidates, Pool: dc.Pool}
	if len(c.LandmarkItems) == 0 {
		c.LandmarkItems = nil // as stored (omitempty), for the comparison with a stored estimate
	}
	return c
}

// sameStudy reports whether two estimates' assumptions are of the same
// study settings (the crowd's wrong answers, the target and the budget
// set apart: the researcher's choices for the estimate, not the study's).
func sameStudy(x, y estimate.Assumptions) bool {
	x.Wrong, x.Target, x.Budget = 0, 0, 0
	y.Wrong, y.Target, y.Budget = 0, 0, 0
	return reflect.DeepEqual(x, y)
}

// formatName names a's question format for a sentence.
func formatName(f string) string {
	if f == "" {
		return "triplets"
	}
	return f + " trials"
}

// designsOf names the design a simulates, or its arms with their shares.
func designsOf(a estimate.Assumptions) string {
	if len(a.Arms) == 0 {
		return "design " + a.Design
	}
	parts := make([]string, len(a.Arms))
	for i, arm := range a.Arms {
		parts[i] = fmt.Sprintf("%s (%s, %s)", arm.Name, arm.Design, format.PercentCompact(arm.Share))
	}
	return "arms " + strings.Join(parts, ", ")
}

// estimateSentence is the estimate's answer in answers, participants,
// minutes and pay.
func estimateSentence(r *estimate.Result, pc pace) string {
	target := format.Percent(r.Target, 1)
	if r.Answers == nil {
		return fmt.Sprintf("The simulated learning curve levels off at %s: no number of answers is projected to reach a held-out error of %s.",
			format.Percent(r.A, 1), target)
	}
	cost, _ := pc.answersCost(*r.Answers)
	if cost != "" {
		cost = " (" + cost + ")"
	}
	hi := "never"
	if r.High != nil {
		hi = roundAnswers(*r.High)
	}
	lo := "none"
	if r.Low != nil && *r.Low > 0 {
		lo = roundAnswers(*r.Low)
	}
	return fmt.Sprintf("About %s answers%s to reach a held-out error of %s (%s interval: %s to %s answers%s).",
		roundAnswers(*r.Answers), cost, target, format.Percent(r.Level, 0), lo, hi, pc.rangeCost(r.Low, r.High))
}

// estimateAssumed says what the simulation assumed: the crowd, the
// format and the design(s) whose questions it answered, the participants
// and their questions, the items and the fit.
func estimateAssumed(a estimate.Assumptions, r *estimate.Result) string {
	questions := format.Thousands(int64(r.Budget)) + " random questions"
	switch {
	case r.Format != "" && r.Format != string(study.FormatTriplet):
		questions = fmt.Sprintf("%s random %s trials (each implying %d triplets, fitted as the study's recompute fits them)",
			format.Thousands(int64(r.Budget)), r.Format, r.PerAnswer)
	case len(r.Arms) > 0:
		parts := make([]string, len(r.Arms))
		for i, arm := range r.Arms {
			parts[i] = fmt.Sprintf("%s, %s of the participants: %s (%s)", arm.Name, format.PercentCompact(arm.Share), arm.Design, arm.About)
		}
		questions = fmt.Sprintf("%s questions of the study's arms, each participant in one (%s)", format.Thousands(int64(r.Budget)), strings.Join(parts, "; "))
	case r.Design != "" && r.Design != study.DesignRandom:
		questions = fmt.Sprintf("%s questions of the study's design, %s (%s)", format.Thousands(int64(r.Budget)), r.Design, r.About)
	}
	if r.Fallbacks > 0 {
		questions += fmt.Sprintf("; %s of them random questions once a design had none open, as the study serves them", format.Thousands(int64(r.Fallbacks)))
	}
	s := fmt.Sprintf("Assumed: a simulated crowd with %s wrong answers answering %s about %d items placed at random (a normal cloud) in d = %d dimensions, fitted by %s as the study's recompute fits; the held-out error is measured on %s more of the crowd's answers to random triplets, as noisy as the rest, as the dashboard measures it.",
		format.PercentCompact(a.Wrong), questions, a.Items, a.Dim, strings.ToUpper(a.Method), format.Thousands(estimate.TestAnswers))
	if r.Participants > 0 {
		s += fmt.Sprintf(" %s participants answered %d questions each, one after the other", format.Thousands(int64(r.Participants)), a.Questions)
		if r.Heldout > 0 {
			s += fmt.Sprintf(", %s of their answers held out of every fit (the study's held-out share, %s)", format.Thousands(int64(r.Heldout)), format.PercentCompact(a.HeldoutShare))
		}
		s += "."
	}
	if r.Design == "" && a.Design != study.DesignRandom {
		s += fmt.Sprintf(" The study's design (%s) was not simulated: its questions were random here.", a.Design)
	}
	if r.TargetAuto {
		s += fmt.Sprintf(" The target is %s above the %s the curve levels off at.", format.PercentagePoints(estimate.TargetGap), format.Percent(r.A, 1))
	}
	return s + fmt.Sprintf(" Fitted by e(n) = a + b·n^(−c) with a = %s, c = %.2f; the interval is a residual bootstrap of the fit.", format.Percent(r.A, 1), r.C)
}

// estimateArms says, for each arm of the simulated study, how many
// answers of its own its curve needs to reach the study's target, and
// what that is in answers of the study at the arm's share.
func estimateArms(r *estimate.Result) []templates.EstimateArm {
	out := make([]templates.EstimateArm, 0, len(r.Arms))
	target := format.Percent(r.Target, 1)
	for _, arm := range r.Arms {
		e := templates.EstimateArm{Name: arm.Name}
		head := fmt.Sprintf("%s (%s, %s of the participants, %s simulated answers)", arm.Name, arm.Design, format.PercentCompact(arm.Share), format.Thousands(int64(arm.Simulated)))
		switch {
		case arm.Error != "":
			e.Sentence = fmt.Sprintf("%s: no curve of its own (%s).", head, arm.Error)
		case arm.Answers == nil:
			e.Sentence = fmt.Sprintf("%s: its curve levels off at %s and does not reach %s.", head, format.Percent(arm.A, 1), target)
		default:
			hi := "never"
			if arm.High != nil {
				hi = roundAnswers(*arm.High)
			}
			lo := "none"
			if arm.Low != nil && *arm.Low > 0 {
				lo = roundAnswers(*arm.Low)
			}
			e.Sentence = fmt.Sprintf("%s: about %s answers of its own to reach %s (%s interval: %s to %s), about %s answers of the study at its share.",
				head, roundAnswers(*arm.Answers), target, format.Percent(r.Level, 0), lo, hi, roundAnswers(*arm.Answers/arm.Share))
		}
		out = append(out, e)
	}
	return out
}

// estimateSVG draws the simulated learning curve and its fit.
func estimateSVG(r *estimate.Result) string {
	meas := plot.Series{Class: "s1", Legend: "simulated"}
	fit := plot.Series{Class: "s2", Legend: fmt.Sprintf("fitted (%s interval)", format.Percent(r.Level, 0)), NoMarkers: true}
	for _, p := range r.Points {
		meas.X, meas.Y = append(meas.X, float64(p.Answers)), append(meas.Y, p.Error)
	}
	for _, b := range r.Band {
		fit.X, fit.Y = append(fit.X, b.Answers), append(fit.Y, b.Error)
		fit.Low, fit.High = append(fit.Low, b.Low), append(fit.High, b.High)
	}
	return plot.Lines([]plot.Series{meas, fit}, 640, 240, "answers", "held-out error (share wrong)", false, "simulated learning curve with its fit")
}

// runEstimate saves the study's costs and estimates its answers from a
// simulation on its own settings (POST /admin/studies/{slug}/estimate).
func (s *Server) runEstimate(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	num := func(name string) (float64, bool) {
		x, err := strconv.ParseFloat(strings.TrimSpace(r.PostFormValue(name)), 64)
		return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	pay, ok1 := num("pay_per_hour")
	sec, ok2 := num("seconds_per_question")
	wrong, ok3 := num("wrong_pct")
	target, ok4 := num("target_error_pct")
	if strings.TrimSpace(r.PostFormValue("target_error_pct")) == "" {
		target, ok4 = 0, true
	}
	c := study.Costs{PayPerHour: pay, Currency: strings.TrimSpace(r.PostFormValue("currency")), SecondsPerQuestion: sec}
	if !(ok1 && ok2 && ok3 && ok4) || !(wrong >= 0 && wrong < 50) || !(target >= 0 && target < 100) {
		return &httpError{status: http.StatusUnprocessableEntity, msg: "the pay, the seconds per question, the wrong answers (0–49%) and the target need numbers"}
	}
	if err := s.store.SetStudyCosts(r.Context(), st.ID, c); err != nil {
		return err
	}
	items, err := s.store.ListItems(r.Context(), st.ID)
	if err != nil {
		return err
	}
	rs, err := s.store.RecomputeSettings(r.Context(), st.ID)
	if err != nil {
		return err
	}
	dc, err := s.designConfigOf(r.Context(), st)
	if err != nil {
		return err
	}
	a := assumptionsOf(st, rs, dc, len(items))
	a.Wrong, a.Target = wrong/100, target/100
	select {
	case estimateSlot <- struct{}{}:
		defer func() { <-estimateSlot }()
	default:
		return &httpError{status: http.StatusServiceUnavailable, msg: "another estimate is running; try again in a few seconds"}
	}
	start := time.Now()
	limit := s.cfg.EstimateLimit
	if limit <= 0 {
		limit = estimateLimit(s.cfg.Timeout)
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	res, runErr := estimate.Run(ctx, a)
	if r.Context().Err() != nil {
		return r.Context().Err()
	}
	if ctx.Err() != nil {
		s.log.Warn("estimate over its time", "study", st.ID, "items", a.Items, "limit", limit)
		return &httpError{status: http.StatusServiceUnavailable, msg: fmt.Sprintf(
			"the estimate did not finish within %s, its share of the request's time (the server is busy: an estimate at its caps takes about 3 s on 2 idle cores); nothing was replaced, try again in a minute",
			limit.Round(time.Second))}
	}
	stored := store.StoredEstimate{}
	if stored.Assumed, err = json.Marshal(a); err != nil {
		return err
	}
	if runErr != nil {
		stored.Error = runErr.Error()
	} else if stored.Result, err = json.Marshal(res); err != nil {
		return err
	}
	if err := s.store.SaveEstimate(r.Context(), st.ID, stored); err != nil {
		return err
	}
	s.log.Info("estimate", "study", st.ID, "items", a.Items, "answers", a.Budget, "took", time.Since(start), "error", stored.Error)
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?msg=estimated#estimate", http.StatusSeeOther)
	return nil
}
