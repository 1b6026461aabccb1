package study

import "github.com/closer-lab/closer/internal/trial"

// The formats besides the triplet (issue 27), defined with the trial
// files in internal/trial so that the fits can read them without the
// study's packages.
const (
	// FormatOddOneOut shows three items side by side, with no anchor; the
	// participant chooses the one least like the other two.
	FormatOddOneOut = trial.FormatOddOneOut
	// FormatRank shows a query and N references; the participant chooses
	// K of them in order of similarity to the query (a RankSpec).
	FormatRank = trial.FormatRank
	// MinRankChoices and MaxRankOptions bound a rank trial: 2 ≤ K < N ≤ 9.
	MinRankChoices = trial.MinRankChoices
	MaxRankOptions = trial.MaxRankOptions
)

// RankSpec is the size of a rank trial: N references shown, K chosen in
// order ("rank:N:K").
type RankSpec = trial.RankSpec

// ParseRankSpec parses "rank:N:K" (for example "rank:8:2") and validates it.
func ParseRankSpec(text string) (RankSpec, error) { return trial.ParseRankSpec(text) }
