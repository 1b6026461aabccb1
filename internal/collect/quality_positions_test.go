package collect

import "testing"

// A participant's trials are placed by their id and question number alone:
// the same on every call (a reload, another replica), listed numbers
// exactly, a share close to the one asked over many numbers, catch before
// repeat on a shared number, different participants differently.
func TestTrialPositionsDeterministic(t *testing.T) {
	q := QualityControl{CatchPercent: 20, RepeatAt: []int{3, 7}}
	catches, differ := 0, 0
	const n = 20000
	for pos := 1; pos <= n; pos++ {
		got := q.trialAt(42, pos)
		if again := q.trialAt(42, pos); again != got {
			t.Fatalf("position %d: %q then %q", pos, got, again)
		}
		if got == DesignCatch {
			catches++
		}
		if (got == DesignRepeat) != ((pos == 3 || pos == 7) && got != DesignCatch) {
			t.Fatalf("position %d: %q", pos, got)
		}
		if q.trialAt(43, pos) != got {
			differ++
		}
	}
	if share := float64(catches) / n; share < 0.19 || share > 0.21 {
		t.Errorf("catch share %.3f, want about 0.20", share)
	}
	if differ == 0 {
		t.Error("two participants got the very same trials")
	}
	both := QualityControl{CatchAt: []int{5}, RepeatAt: []int{5}}
	if got := both.trialAt(1, 5); got != DesignCatch {
		t.Errorf("catch and repeat on one number: %q, want catch", got)
	}
	if got := (QualityControl{}).trialAt(1, 5); got != "" {
		t.Errorf("no settings: %q", got)
	}
	c1, e1 := catchComparison(42, 9, 10)
	c2, e2 := catchComparison(42, 9, 10)
	if c1 != c2 || e1 != e2 || e1 != c1.Anchor || (c1.Left != c1.Anchor) == (c1.Right != c1.Anchor) {
		t.Errorf("catch comparisons %+v (%d), %+v (%d)", c1, e1, c2, e2)
	}
}
