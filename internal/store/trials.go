package store

import (
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// derivedTriplets returns the triplets a trial of another format than
// the triplet derives (issue 27), from its stored row: anchor (a rank
// trial's query), options (questions.options, in display order) and
// choices (answers.choices, in order). One choice among three options is
// an odd-one-out trial (trial.OddOneOut.Triplets: two triplets); more are
// a rank trial (trial.Rank.Triplets: k·n − k(k+1)/2). Nil for a row that
// is neither (a triplet's: no choices).
func derivedTriplets(anchor int, options, choices []int) []triplet.Triplet {
	switch {
	case len(choices) == 1 && len(options) == 3:
		return trial.OddOneOut{Items: [3]int(options), Odd: choices[0]}.Triplets(nil)
	case len(choices) >= 2:
		return trial.Rank{Query: anchor, Options: options, Choices: choices}.Triplets(nil)
	}
	return nil
}
