package web

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// comparesDesigns reports whether the dashboard shows the "Designs
// compared" section for st: a study with arms or a held-out share.
func comparesDesigns(st study.Study) bool {
	return len(st.Arms) > 0 || st.HeldoutShare > 0
}

// armsView builds the "Designs compared" section of study st: the arms'
// learning curves from the latest finished run's result (latest, nil
// before the first; its curve holds every earlier run's points, see
// recompute.CurvePoint) and the table of the arms, whose counts are
// current (statuses, the store's DesignStatuses of st; the participants
// assigned) and whose errors are the latest run's. participants is the
// study's participants, for a study without arms.
func (s *Server) armsView(ctx context.Context, st study.Study, statuses []study.DesignStatus, latest *runEntry, participants int) (*templates.ArmsView, error) {
	assigned := []int{participants}
	if len(st.Arms) > 0 {
		var err error
		if assigned, err = s.store.ArmParticipants(ctx, st.ID); err != nil {
			return nil, err
		}
	}
	var res *recompute.Result
	if latest != nil {
		res = latest.res
	}
	counts, err := s.store.ArmAnswerCounts(ctx, st.ID, len(statuses))
	if err != nil {
		return nil, err
	}
	v := &templates.ArmsView{HeldoutPct: format.PercentCompact(st.HeldoutShare)}
	var points []dashboard.ArmPoint
	byArm := map[int]recompute.ArmResult{}
	if res != nil {
		for _, p := range res.Curve {
			points = append(points, dashboard.ArmPoint{Run: p.Run, Arm: p.Arm, Answers: p.Answers, Heldout: p.Heldout, Wrong: p.Wrong})
		}
		for _, a := range res.Arms {
			byArm[a.Arm] = a
		}
	}
	curves := dashboard.ArmCurves(points, len(statuses))
	names := make([]string, len(statuses))
	for i, d := range statuses {
		names[i] = d.ArmName
	}
	draw := func() string { return armCurvesSVG(curves, names) }
	if latest != nil {
		v.Curve = templ.Raw(s.dash.plot(latest, "arms", draw))
	} else {
		v.Curve = templ.Raw(draw())
	}
	cmp := dashboard.Compare(curves)
	v.Summary = comparisonSummary(res, cmp, names, byArm)
	if res != nil && cmp.Answers > 0 {
		v.Common = fmt.Sprintf("At %s each", format.Thousands(int64(cmp.Answers)))
	}
	for i, d := range statuses {
		// Before the arm's first fit, the store's counts now; after it,
		// the participants and answers the latest run fitted, as the
		// curve and the error: excluded participants left out of both,
		// and of the held-out answers (the store's counts now).
		r := templates.ArmRow{Class: armClass(i), Name: d.ArmName, Design: d.Design, Share: format.PercentCompact(d.Share),
			Error: "–", AtCommon: "–"}
		if i < len(counts) {
			r.Answers, r.Heldout = counts[i].Answers, counts[i].Heldout
		}
		if i < len(assigned) {
			r.Participants = assigned[i]
		}
		if i < len(cmp.Error) && !math.IsNaN(cmp.Error[i]) {
			r.AtCommon = format.PercentCompact(cmp.Error[i])
		}
		if a, ok := byArm[i]; ok {
			r.Participants, r.Answers = a.Participants, a.Answers
		}
		if a, ok := byArm[i]; ok && a.HeldoutError != nil {
			r.Error = format.PercentCompact(*a.HeldoutError)
			lo, hi := dashboard.Wilson(a.Wrong, a.Heldout, dashboard.Z95)
			r.ErrorNote = fmt.Sprintf("%d of %d wrong; 95%%: %s–%s", a.Wrong, a.Heldout, format.PercentCompact(lo), format.PercentCompact(hi))
			r.ErrorTitle = fmt.Sprintf("the map of the arm's %d answers gets %d of the %d held-out answers wrong; the 95%% interval of that share is %s to %s (Wilson score interval)",
				a.Answers, a.Wrong, a.Heldout, format.PercentCompact(lo), format.PercentCompact(hi))
		} else if res != nil {
			r.ErrorNote = "no answers in the last recompute"
		}
		if d.Design == study.DesignActive {
			v.Active = true
			r.Warmup, r.Refreshes, r.PoolLeft = "not started", "0", "–"
			if p := d.Progress.Active; p != nil {
				r.Warmup = fmt.Sprintf("%d of %d", min(p.Answers, p.Warmup), p.Warmup)
				if p.Answers >= p.Warmup {
					r.Warmup = "done (" + strconv.Itoa(p.Warmup) + ")"
				}
				r.Refreshes = strconv.Itoa(p.Refreshes)
				r.PoolLeft = fmt.Sprintf("%d of %d", p.PoolLeft, p.PoolSize*max(d.Config.Repeats, 1))
			}
		}
		v.Rows = append(v.Rows, r)
	}
	return v, nil
}

// armsSummary names the arms and their designs ("smart (active), plain
// (random); compared below").
func armsSummary(arms []study.Arm) string {
	parts := make([]string, len(arms))
	for i, a := range arms {
		parts[i] = a.Name + " (" + a.Design + ")"
	}
	return strings.Join(parts, ", ") + "; compared below"
}

// armClass is arm i's curve class.
func armClass(i int) string { return "a" + strconv.Itoa(i%8) }

// armCurvesSVG draws the arms' learning curves, one line per arm, each
// point's 95% Wilson interval on its held-out answers shaded under it.
func armCurvesSVG(curves []dashboard.ArmCurve, names []string) string {
	ss := make([]plot.Series, len(curves))
	for i, c := range curves {
		ss[i] = plot.Series{Class: armClass(i), Legend: names[i]}
		for k := range c.Answers {
			lo, hi := dashboard.Wilson(int(math.Round(c.Error[k]*float64(c.Heldout[k]))), c.Heldout[k], dashboard.Z95)
			ss[i].X = append(ss[i].X, float64(c.Answers[k]))
			ss[i].Y = append(ss[i].Y, c.Error[k])
			ss[i].Low, ss[i].High = append(ss[i].Low, lo), append(ss[i].High, hi)
		}
	}
	return plot.Curves(ss, 880, 320, "the arm's answers", "held-out error (share wrong)", "held-out error of each arm against its answers, with 95% intervals")
}

// comparisonSummary says in words how the arms compare at the most answers
// all of them reached (c), and with all their answers in the latest run
// (byArm), or why they cannot be compared yet: the numbers of the table's
// two error columns, so that the sentence and the table agree.
func comparisonSummary(res *recompute.Result, c dashboard.Comparison, names []string, byArm map[int]recompute.ArmResult) string {
	switch {
	case res == nil:
		return "The curves appear after the first recompute."
	case res.HeldoutAnswers == 0:
		return "No held-out answers yet: the arms are judged on them."
	case c.Answers == 0:
		return "Each arm needs answers of its own (and a recompute after them) before the arms can be compared."
	}
	var parts []string
	for i, e := range c.Error {
		if !math.IsNaN(e) {
			parts = append(parts, fmt.Sprintf("%s %s", names[i], format.PercentCompact(e)))
		}
	}
	var last []string
	beyond := false // some arm's latest fit has more answers than c.Answers
	for i := range names {
		if a, ok := byArm[i]; ok && a.HeldoutError != nil {
			last = append(last, fmt.Sprintf("%s %s at %s", names[i], format.PercentCompact(*a.HeldoutError), format.Thousands(int64(a.Answers))))
			beyond = beyond || a.Answers > c.Answers
		}
	}
	s := fmt.Sprintf("At %s answers each (the most every arm has reached; the table's \"At %s each\"), the held-out error was: %s.",
		format.Thousands(int64(c.Answers)), format.Thousands(int64(c.Answers)), strings.Join(parts, ", "))
	if beyond {
		s += " With all their answers in the last recompute (\"Held-out error\"): " + strings.Join(last, ", ") + "."
	}
	return s + fmt.Sprintf(" Measured on %d held-out answers, errors within about %s of each other are not told apart yet; more answers narrow that.",
		c.Heldout, format.PercentagePoints(2*c.SE))
}
