package collect

import (
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// A participant's trials are placed by their id and question number alone:
// the same on every call (a reload, another replica), listed numbers
// exactly, a share exactly, catch before repeat on a shared number,
// different participants differently.
func TestTrialPositionsDeterministic(t *testing.T) {
	t.Parallel()
	q := study.QualityControl{CatchPercent: 20, RepeatAt: []int{3, 7}}
	catches, differ := 0, 0
	const n = 2000 // TrialAt is O(total) a call: 20,000 took 74 s of the race run
	for pos := 1; pos <= n; pos++ {
		got := q.TrialAt(42, pos, n)
		if again := q.TrialAt(42, pos, n); again != got {
			t.Fatalf("position %d: %q then %q", pos, got, again)
		}
		if got == study.DesignCatch {
			catches++
		}
		if (got == study.DesignRepeat) != ((pos == 3 || pos == 7) && got != study.DesignCatch) {
			t.Fatalf("position %d: %q", pos, got)
		}
		if q.TrialAt(43, pos, n) != got {
			differ++
		}
	}
	if catches != n/5 {
		t.Errorf("%d catch trials in %d questions, want exactly 20%%", catches, n)
	}
	if differ == 0 {
		t.Error("two participants got the very same trials")
	}
	both := study.QualityControl{CatchAt: []int{5}, RepeatAt: []int{5}}
	if got := both.TrialAt(1, 5, 10); got != study.DesignCatch {
		t.Errorf("catch and repeat on one number: %q, want catch", got)
	}
	if got := (study.QualityControl{}).TrialAt(1, 5, 10); got != "" {
		t.Errorf("no settings: %q", got)
	}
	a1, x1, s1 := study.CatchItems(42, 9, 10)
	a2, x2, s2 := study.CatchItems(42, 9, 10)
	if a1 != a2 || x1 != x2 || s1 != s2 || a1 == x1 || x1 < 0 || x1 >= 10 {
		t.Errorf("catch items (%d, %d, %v), (%d, %d, %v)", a1, x1, s1, a2, x2, s2)
	}
}

// A share is an exact count for every participant (issue 26: 5 % of 60
// questions came out as 2 to 6 catch trials, a draw per question):
// round(percent · questions / 100) catch trials and as many repeats, on
// distinct numbers, no repeat first, placed differently per participant.
func TestTrialSharesAreExactCounts(t *testing.T) {
	t.Parallel()
	q := study.QualityControl{CatchPercent: 5, RepeatPercent: 10}
	for _, c := range []struct{ total, catches, repeats int }{{60, 3, 6}, {50, 3, 5}, {7, 0, 1}, {1, 0, 0}} {
		firsts := map[int]bool{}
		for p := int64(1); p <= 200; p++ {
			catches, repeats, first := 0, 0, 0
			for pos := 1; pos <= c.total; pos++ {
				switch q.TrialAt(p, pos, c.total) {
				case study.DesignCatch:
					catches++
					if first == 0 {
						first = pos
					}
				case study.DesignRepeat:
					repeats++
					if pos == 1 {
						t.Fatalf("participant %d: a repeat as question 1", p)
					}
				}
			}
			if catches != c.catches || repeats != c.repeats {
				t.Fatalf("%d questions, participant %d: %d catch and %d repeat trials, want %d and %d",
					c.total, p, catches, repeats, c.catches, c.repeats)
			}
			firsts[first] = true
		}
		if c.catches > 0 && len(firsts) < 10 {
			t.Errorf("%d questions: the first catch trial at only %d numbers over 200 participants", c.total, len(firsts))
		}
	}
}
