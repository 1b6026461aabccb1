package web

import (
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/study"
)

// TestProjectionSentence: the projection's sentence counts answers and
// participants (rounded to two significant digits; participants rounded
// up) and says "never" for an interval without an upper end; a curve
// within half a percentage point of its floor is called levelled off
// instead of asking answers for a target inside that gap.
func TestProjectionSentence(t *testing.T) {
	t.Parallel()
	f := func(x float64) *float64 { return &x }
	p := &analysis.Projection{A: 0.10, B: 2, C: 0.5, Level: 0.8, Answers: 5000, Train: 4500, Now: 0.14, Target: 0.12, TargetAuto: true,
		More: analysis.Interval{Value: f(12345), Low: f(8100), High: nil}, Twice: analysis.Interval{Value: f(0.13), Low: f(0.125), High: f(0.136)}}
	pc := pace{Questions: 60, Seconds: 8, Costs: study.DefaultCosts()}
	v := projectionView(p, pc)
	// 12,345 → 12,000; participants ⌈12,345 / 60⌉ = 206 → 210; 60 × 8 s = 8 minutes each.
	for _, want := range []string{"About 12,000 more answers (210 participants at 60 questions each, about 8 minutes each)", "from 14.0% to 12.0%",
		"halfway to the 10.0% the curve levels off at", "80% interval: 8,100 to never more answers", "With twice the answers (10,000 in all)", "13.0% (80% interval 12.5%–13.6%)"} {
		if !strings.Contains(v.Sentence+" "+v.Twice, want) {
			t.Errorf("%q lacks %q", v.Sentence+" "+v.Twice, want)
		}
	}
	if !strings.Contains(v.Cost, "8 s a question: the study's setting") || !strings.Contains(v.Cost, "Set a pay rate") {
		t.Errorf("cost note %q", v.Cost)
	}
	// With a pay rate and a measured pace of 9 s: 206 participants × 9
	// minutes × 12 GBP an hour = 370.8 → 371 GBP; the interval's ends in
	// pay: ⌈8,100 / 60⌉ = 135 participants → 243 GBP, ⌈20,000 / 60⌉ =
	// 334 → 601.2 → 601 GBP.
	pc = pace{Questions: 60, Seconds: 9, Measured: true, Gaps: 1234, Costs: study.Costs{PayPerHour: 12, Currency: "GBP", SecondsPerQuestion: 8}}
	p.More.High = f(20000)
	v = projectionView(p, pc)
	for _, want := range []string{"(210 participants at 60 questions each, about 9 minutes each, about 371 GBP in pay at the study's rate of 12.00 GBP an hour)",
		"80% interval: 8,100 to 20,000 more answers, 243 GBP to 601 GBP in pay)"} {
		if !strings.Contains(v.Sentence, want) {
			t.Errorf("%q lacks %q", v.Sentence, want)
		}
	}
	if !strings.Contains(v.Cost, "9 s a question: the median time between a participant's consecutive answers in this study (1,234 measured)") {
		t.Errorf("cost note %q", v.Cost)
	}
	p.Now, p.A, p.Target = 0.210, 0.209, 0.2095
	if v := projectionView(p, pc); !strings.Contains(v.Sentence, "levelled off") || strings.Contains(v.Sentence, "About") {
		t.Errorf("a curve at its floor: %q", v.Sentence)
	}
}
