package collect

import (
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// A participant's trials are placed by their id and question number alone:
// the same on every call (a reload, another replica), listed numbers
// exactly, a share close to the one asked over many numbers, catch before
// repeat on a shared number, different participants differently.
func TestTrialPositionsDeterministic(t *testing.T) {
	t.Parallel()
	q := study.QualityControl{CatchPercent: 20, RepeatAt: []int{3, 7}}
	catches, differ := 0, 0
	const n = 20000
	for pos := 1; pos <= n; pos++ {
		got := q.TrialAt(42, pos)
		if again := q.TrialAt(42, pos); again != got {
			t.Fatalf("position %d: %q then %q", pos, got, again)
		}
		if got == study.DesignCatch {
			catches++
		}
		if (got == study.DesignRepeat) != ((pos == 3 || pos == 7) && got != study.DesignCatch) {
			t.Fatalf("position %d: %q", pos, got)
		}
		if q.TrialAt(43, pos) != got {
			differ++
		}
	}
	if share := float64(catches) / n; share < 0.19 || share > 0.21 {
		t.Errorf("catch share %.3f, want about 0.20", share)
	}
	if differ == 0 {
		t.Error("two participants got the very same trials")
	}
	both := study.QualityControl{CatchAt: []int{5}, RepeatAt: []int{5}}
	if got := both.TrialAt(1, 5); got != study.DesignCatch {
		t.Errorf("catch and repeat on one number: %q, want catch", got)
	}
	if got := (study.QualityControl{}).TrialAt(1, 5); got != "" {
		t.Errorf("no settings: %q", got)
	}
	a1, x1, s1 := study.CatchItems(42, 9, 10)
	a2, x2, s2 := study.CatchItems(42, 9, 10)
	if a1 != a2 || x1 != x2 || s1 != s2 || a1 == x1 || x1 < 0 || x1 >= 10 {
		t.Errorf("catch items (%d, %d, %v), (%d, %d, %v)", a1, x1, s1, a2, x2, s2)
	}
}
