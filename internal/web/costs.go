package web

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/study"
)

// minPaceGaps is the number of measured gaps between answers from which
// the study's own pace replaces the "seconds per question" setting.
const minPaceGaps = 20

// pace is what a question costs a study: seconds (measured on the study's
// answers when Measured) and the pay rate.
type pace struct {
	Seconds  float64
	Measured bool
	Gaps     int
	Costs    study.Costs
	// Questions is the study's questions per participant.
	Questions int
}

// paceOf reads study st's costs and measured pace: the median gap
// between a participant's answers once minPaceGaps gaps are measured, the
// setting before.
func (s *Server) paceOf(ctx context.Context, st study.Study) (pace, error) {
	c, err := s.store.StudyCosts(ctx, st.ID)
	if err != nil {
		return pace{}, err
	}
	sec, n, err := s.store.MeasuredPace(ctx, st.ID)
	if err != nil {
		return pace{}, err
	}
	p := pace{Seconds: c.SecondsPerQuestion, Costs: c, Gaps: n, Questions: st.QuestionsPerParticipant}
	if n >= minPaceGaps && sec > 0 {
		p.Seconds, p.Measured = sec, true
	}
	return p, nil
}

// answersCost says what answers answers cost at p: "M participants at Q
// questions each, about T minutes each, C in pay at the study's rate of R
// an hour" (the pay only with a rate set), and how the time was found.
func (p pace) answersCost(answers float64) (cost, how string) {
	if p.Questions <= 0 || !(answers > 0) {
		return "", ""
	}
	people := math.Ceil(answers / float64(p.Questions))
	minutes := float64(p.Questions) * p.Seconds / 60
	cost = fmt.Sprintf("%s participants at %d questions each, about %s minutes each", roundAnswers(people), p.Questions, minutesText(minutes))
	if p.Costs.PayPerHour > 0 {
		pay := people * minutes / 60 * p.Costs.PayPerHour
		cost += fmt.Sprintf(", about %s in pay at the study's rate of %s an hour", money(pay, p.Costs.Currency), money(p.Costs.PayPerHour, p.Costs.Currency))
	}
	if p.Measured {
		how = fmt.Sprintf("%s s a question: the median time between a participant's consecutive answers in this study (%s measured).",
			secondsText(p.Seconds), format.Thousands(int64(p.Gaps)))
	} else {
		how = fmt.Sprintf("%s s a question: the study's setting, until %d gaps between answers measure it.", secondsText(p.Seconds), minPaceGaps)
	}
	if p.Costs.PayPerHour == 0 {
		how += " Set a pay rate on the study page to see the pay."
	}
	return cost, how
}

// money writes an amount with its currency: whole units from 100, cents
// below.
func money(x float64, currency string) string {
	if x >= 100 {
		return format.Thousands(int64(math.Round(x))) + " " + currency
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + " " + currency
}

// minutesText writes minutes to one decimal below 10, whole above.
func minutesText(m float64) string {
	if m < 10 {
		return strconv.FormatFloat(math.Round(m*10)/10, 'f', -1, 64)
	}
	return format.Thousands(int64(math.Round(m)))
}

// secondsText writes seconds to one decimal.
func secondsText(s float64) string {
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64)
}

// rangeCost says what the ends of an interval of answers cost in pay (or,
// without a pay rate, in participants): ", i.e. 120–480 USD in pay"; ""
// when an end is unknown.
func (p pace) rangeCost(lo, hi *float64) string {
	if p.Questions <= 0 || lo == nil || hi == nil {
		return ""
	}
	people := func(x float64) float64 { return math.Ceil(math.Max(x, 0) / float64(p.Questions)) }
	if p.Costs.PayPerHour > 0 {
		pay := func(x float64) string {
			return money(people(x)*float64(p.Questions)*p.Seconds/3600*p.Costs.PayPerHour, p.Costs.Currency)
		}
		return fmt.Sprintf(", %s to %s in pay", pay(*lo), pay(*hi))
	}
	return fmt.Sprintf(", %s to %s participants", roundAnswers(people(*lo)), roundAnswers(people(*hi)))
}
