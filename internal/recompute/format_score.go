package recompute

import (
	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
)

// formatScore scores the held-out trials among answers (the rows the run
// fitted from: not excluded, not DesignHeldout) on the points x, in the
// study's format; nil when answers hold no trial or none was held out.
// seed and frac are the fit's split (analysis.Settings).
func formatScore(answers []study.RunAnswer, x *mat.Dense, seed uint64, frac float64) *FormatScore {
	var odd []trial.OddOneOut
	var ranks []trial.Rank
	seen := map[string]bool{}
	for _, a := range answers {
		if a.Choices == nil || a.Excluded || a.Design == study.DesignHeldout || seen[a.QuestionID] {
			continue
		}
		seen[a.QuestionID] = true
		if !analysis.HeldOut(a.QuestionID, seed, frac) {
			continue
		}
		switch {
		case len(a.Options) == 3 && len(a.Choices) == 1:
			odd = append(odd, trial.OddOneOut{Items: [3]int(a.Options), Odd: a.Choices[0]})
		case len(a.Choices) >= 2:
			ranks = append(ranks, trial.Rank{Query: a.Anchor, Options: a.Options, Choices: a.Choices})
		}
	}
	switch {
	case len(odd) > 0:
		return &FormatScore{Name: "odd-one-out accuracy", Value: num(embed.OddOneOutAccuracy(x, odd)), Trials: len(odd), Chance: 1.0 / 3}
	case len(ranks) > 0:
		return &FormatScore{Name: "rank top-1 accuracy", Value: num(embed.RankTop1Accuracy(x, ranks)), Trials: len(ranks),
			Chance: 1 / float64(len(ranks[0].Options))}
	}
	return nil
}
