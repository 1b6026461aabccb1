package templates

import (
	"strconv"

	"github.com/a-h/templ"
)

// TrustView is the dashboard's sections on the shown run's dimension
// choice, uncertainty and projection (issue 28), their figures already
// formatted. A nil part was not computed; Notes say why.
type TrustView struct {
	Dimensions  *DimensionsView
	Uncertainty *UncertaintyView
	Projection  *ProjectionView
	Notes       []string
}

// DimensionsView is the "Dimensions" section: the held-out error against d
// with its standard error (SVG, the suggested d ringed), the sentence
// naming the suggestion and the table.
type DimensionsView struct {
	SVG       templ.Component
	Suggested int
	Sentence  string
	// Pinned says what the study's embedding uses and how to change it.
	Pinned string
	Rows   []DimensionRow
}

// DimensionRow is one dimension's line of the table.
type DimensionRow struct {
	Dim                  int
	Error, SE, Train     string
	Suggested, Best, Fit bool
}

// UncertaintyView is the "Uncertainty" section: what the bootstrap did
// and what it found, in one sentence each.
type UncertaintyView struct {
	Method, Error, Spread string
}

// ProjectionView is the "How many more answers" section.
type ProjectionView struct {
	// Sentence is the answer ("About N more answers (M participants …) to
	// bring the held-out error from … to …"), Twice the error expected at
	// twice the answers, Curve how it was estimated.
	Sentence, Twice, Curve string
	// Cost says how the minutes and the pay were found (the study's
	// measured pace or its setting, and its pay rate).
	Cost string
	SVG  templ.Component
}

// targetPct is a target error as the settings form's percentage ("" for
// automatic).
func targetPct(e float64) string {
	if e <= 0 {
		return ""
	}
	return strconv.FormatFloat(e*100, 'g', 4, 64)
}
