package web

import (
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/analysis"
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
	v := projectionView(p, 60)
	// 12,345 → 12,000; participants ⌈12,345 / 60⌉ = 206 → 210.
	for _, want := range []string{"About 12,000 more answers (210 participants at 60 questions each)", "from 14.0% to 12.0%",
		"halfway to the 10.0% the curve levels off at", "80% interval: 8,100 to never more answers", "With twice the answers (10,000 in all)", "13.0% (80% interval 12.5%–13.6%)"} {
		if !strings.Contains(v.Sentence+" "+v.Twice, want) {
			t.Errorf("%q lacks %q", v.Sentence+" "+v.Twice, want)
		}
	}
	p.Now, p.A, p.Target = 0.210, 0.209, 0.2095
	if v := projectionView(p, 60); !strings.Contains(v.Sentence, "levelled off") || strings.Contains(v.Sentence, "About") {
		t.Errorf("a curve at its floor: %q", v.Sentence)
	}
}
