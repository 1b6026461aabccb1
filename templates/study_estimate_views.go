package templates

import "github.com/a-h/templ"

// EstimateView is the study page's "How many answers" section (issue 28):
// what answers cost the study (its pay rate and seconds per question, the
// form) and the estimate before opening from a simulation on the study's
// own settings, with what it assumed.
type EstimateView struct {
	Slug string
	Can  Can // the form is shown to those who may run an estimate
	// The form's values.
	PayPerHour, Currency, Seconds, WrongPct, TargetPct string
	// Pace says which seconds per question the figures use (measured or
	// the setting).
	Pace string
	// Has is set once an estimate was made: Sentence is its answer,
	// Assumed what it assumed, When when it ran, SVG its learning curve;
	// Error says why the last one failed instead.
	Has                     bool
	Sentence, Assumed, When string
	Error                   string
	SVG                     templ.Component
	// Stale says the study's settings changed since the estimate.
	Stale string
	// Opened: the study has answers, and the dashboard's projection from
	// them is the better estimate.
	Opened bool
	// Arms are the study's arms, each with its own curve's answer (none
	// without arms).
	Arms []EstimateArm
}

// EstimateArm is one arm's line of the estimate: how many answers of its
// own it needs for the study's target.
type EstimateArm struct {
	Name, Sentence string
}
