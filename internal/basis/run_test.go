package basis

import (
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestRunStepsAndCounts checks the simulated crowd of Run against its
// documentation, counting by hand:
//
//   - with m annotators each step hands out exactly m questions (design
//     first, random fallbacks for the rest; a step with a fallback counts
//     as a fallback step, and one annotator never needs one), so a run
//     without a budget
//     gives Steps·m answers, and a run with budget B gives B answers in
//     ⌈B/m⌉ steps (the last step only the B mod m left);
//   - a comparison is handed out exactly Repeats times (never more: no
//     answer is refused; never fewer: every comparison is decided by
//     Repeats answers), so MaxPerComparison equals Repeats;
//   - with annotators <= 0 every open comparison is handed out each step
//     and there are no fallbacks, with a budget too: the budget only cuts
//     the last step.
func TestRunStepsAndCounts(t *testing.T) {
	t.Parallel()
	const n = 100
	x := triplet.UniformCube(triplet.NewRand(12), n, 2)
	for _, repeats := range []int{1, 3} {
		s := New(n, Config{Seed: 12, Repeats: repeats})
		st := Run(s, triplet.NewOracle(x, 0.1, 12), 30, 0)
		if !st.Done || st.Answers != 30*st.Steps || st.Rejected != 0 {
			t.Errorf("repeats %d, 30 annotators: done %v, %d answers in %d steps, %d refused", repeats, st.Done, st.Answers, st.Steps, st.Rejected)
		}
		if st.MaxPerComparison != repeats || st.DesignAnswers != repeats*len(s.Triplets()) || s.Answers() != st.DesignAnswers {
			t.Errorf("repeats %d: a comparison handed out up to %d times; %d design answers for %d comparisons, %d accepted",
				repeats, st.MaxPerComparison, st.DesignAnswers, len(s.Triplets()), s.Answers())
		}
		if st.FallbackSteps < 1 || st.FallbackAnswers < 1 || st.DesignAnswers+st.FallbackAnswers != st.Answers {
			t.Errorf("repeats %d: %d fallback answers in %d steps of %d answers (%d design)", repeats, st.FallbackAnswers, st.FallbackSteps, st.Answers, st.DesignAnswers)
		}
	}

	// One annotator always finds a comparison open (the scheme opens the
	// next ones as soon as one is decided): one answer per step and no
	// fallback step.
	s1 := New(n, Config{Seed: 12})
	if st := Run(s1, triplet.NewOracle(x, 0, 12), 1, 0); !st.Done || st.Answers != st.Steps || st.FallbackSteps != 0 || st.FallbackAnswers != 0 {
		t.Errorf("1 annotator: done %v, %d answers in %d steps, %d fallback answers in %d steps", st.Done, st.Answers, st.Steps, st.FallbackAnswers, st.FallbackSteps)
	}

	// A budget of 1000 with 30 annotators: 33 full steps and one of 10.
	s := New(n, Config{Seed: 12})
	if st := Run(s, triplet.NewOracle(x, 0, 12), 30, 1000); st.Answers != 1000 || st.Steps != 34 {
		t.Errorf("budget 1000, 30 annotators: %d answers in %d steps, want 1000 in 34", st.Answers, st.Steps)
	}

	// No annotator count: the first step is the tournament's first round,
	// 49 matches (100 items less the start, paired up), and no fallbacks
	// even when a budget is set.
	for _, budget := range []int{0, 1000} {
		s := New(n, Config{Seed: 12})
		st := Run(s, triplet.NewOracle(x, 0, 12), 0, budget)
		if st.FallbackAnswers != 0 || st.FallbackSteps != 0 || st.DesignAnswers != st.Answers || st.MaxPerComparison != 1 {
			t.Errorf("budget %d, annotators 0: %d fallback answers in %d steps, %d design of %d answers, max %d per comparison",
				budget, st.FallbackAnswers, st.FallbackSteps, st.DesignAnswers, st.Answers, st.MaxPerComparison)
		}
		if budget > 0 && (st.Answers != budget || st.Done) {
			t.Errorf("budget %d, annotators 0: %d answers, done %v", budget, st.Answers, st.Done)
		}
		if budget == 0 && (!st.Done || st.Answers != len(s.Triplets())) {
			t.Errorf("no budget, annotators 0: done %v, %d answers for %d comparisons", st.Done, st.Answers, len(s.Triplets()))
		}
	}
	s = New(n, Config{Seed: 12})
	Run(s, triplet.NewOracle(x, 0, 12), 0, 49)
	// 99 players: 49 matches and one bye; the 49 winners and the bye meet
	// in 25 matches of round two.
	if p := s.Progress(); p.Phase != PhaseFarthest || p.SortDone != 49 || p.Open != 25 {
		t.Errorf("after one step of 49 answers: %+v, want 49 matches played, the 25 of round two open", p)
	}
}

// FallbackShare is FallbackAnswers / Answers, and 0 before any answer.
func TestFallbackShare(t *testing.T) {
	t.Parallel()
	if got := (RunStats{Answers: 8, FallbackAnswers: 2}).FallbackShare(); got != 0.25 {
		t.Errorf("2 of 8: %v", got)
	}
	if got := (RunStats{}).FallbackShare(); got != 0 {
		t.Errorf("no answers: %v", got)
	}
}
