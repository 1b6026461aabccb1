package basis

import (
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// RunStats sums up a simulated run of a scheme.
type RunStats struct {
	// Answers counts every answer given, DesignAnswers those to comparisons
	// the scheme had open, FallbackAnswers the random questions served to
	// annotators for whom nothing was open.
	Answers, DesignAnswers, FallbackAnswers int
	// Steps counts the rounds in which every annotator answered one
	// question; FallbackSteps the rounds with fewer comparisons open than
	// annotators.
	Steps, FallbackSteps int
	// Rejected counts design answers that Record refused (0 unless the
	// scheme hands out a comparison more often than Repeats allows).
	Rejected int
	// MaxPerComparison is the largest number of times the driver handed
	// out one comparison of the scheme.
	MaxPerComparison int
	// Done reports whether the scheme finished within the budget.
	Done bool
	// Triplets holds every answer in the order given, fallbacks included:
	// what a store would keep.
	Triplets []triplet.Triplet
}

// FallbackShare returns FallbackAnswers / Answers (0 for no answers).
func (r RunStats) FallbackShare() float64 {
	if r.Answers == 0 {
		return 0
	}
	return float64(r.FallbackAnswers) / float64(r.Answers)
}

// Run drives s with a simulated crowd of annotators answering from the
// oracle o until the scheme is done or budget answers are given (budget <=
// 0: no limit). Each step every annotator takes one question: the open
// comparisons most wanted first, each given to as many annotators as it
// still wants answers (never more), and a uniformly random fallback
// question for every annotator left over. All answers of a step are then
// recorded in order. annotators <= 0 means as many annotators as there are
// open comparisons each step (no fallbacks). The fallback questions are
// drawn from a generator seeded with the scheme's seed.
func Run(s *Scheme, o *triplet.Oracle, annotators, budget int) RunStats {
	var st RunStats
	rng := triplet.NewRand(s.cfg.Seed ^ 0x66616c6c6261636b) // "fallback"
	handed := make(map[triplet.Key]int)
	var needs []design.Need
	type question struct {
		a, i, j  int
		fallback bool
	}
	var qs []question
	for !s.Done() && (budget <= 0 || st.Answers < budget) {
		slots := annotators
		if budget > 0 && (slots <= 0 || slots > budget-st.Answers) {
			slots = budget - st.Answers
		}
		needs = s.Open(needs[:0], slots)
		qs = qs[:0]
		for _, nd := range needs {
			for r := 0; r < nd.Answers && (slots <= 0 || len(qs) < slots); r++ {
				qs = append(qs, question{nd.Key.Anchor, nd.Key.J, nd.Key.K, false})
				handed[nd.Key]++
				st.MaxPerComparison = max(st.MaxPerComparison, handed[nd.Key])
			}
		}
		if annotators > 0 && len(qs) < slots { // without annotators, no fallbacks (budget or not)
			st.FallbackSteps++
			for len(qs) < slots {
				a, i, j := triplet.RandomQuestion(rng, s.n)
				qs = append(qs, question{a, i, j, true})
			}
		}
		if len(qs) == 0 { // nothing open and no annotators to fall back on
			break
		}
		st.Steps++
		for _, q := range qs {
			t := o.Answer(q.a, q.i, q.j)
			st.Triplets = append(st.Triplets, t)
			st.Answers++
			ok := s.Record(t)
			if q.fallback {
				st.FallbackAnswers++
			} else {
				st.DesignAnswers++
				if !ok {
					st.Rejected++
				}
			}
		}
	}
	st.Done = s.Done()
	return st
}
