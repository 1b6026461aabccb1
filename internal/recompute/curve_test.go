package recompute

import "testing"

// The learning curve keeps at most MaxCurveRuns runs: the newest quarter
// whole, every other run before them; its first and last runs stay, and
// each kept run keeps all its arms' points.
func TestThinCurve(t *testing.T) {
	t.Parallel()
	var c []CurvePoint
	for run := int64(1); run <= 1000; run++ {
		for arm := range 3 {
			c = append(c, CurvePoint{Run: run, Arm: arm, Answers: int(run) * 10})
		}
	}
	if got := thinCurve(c[:3*MaxCurveRuns]); len(got) != 3*MaxCurveRuns {
		t.Fatalf("%d runs thinned to %d points", MaxCurveRuns, len(got))
	}
	got := thinCurve(c)
	runs := map[int64]int{}
	for _, p := range got {
		runs[p.Run]++
	}
	if len(runs) > MaxCurveRuns || len(runs) < MaxCurveRuns/2 {
		t.Fatalf("%d runs kept", len(runs))
	}
	for r, k := range runs {
		if k != 3 {
			t.Fatalf("run %d kept %d of its 3 points", r, k)
		}
	}
	if got[0].Run != 1 || got[len(got)-1].Run != 1000 {
		t.Fatalf("first run %d, last %d", got[0].Run, got[len(got)-1].Run)
	}
	for r := int64(1000 - MaxCurveRuns/4 + 1); r <= 1000; r++ {
		if runs[r] == 0 {
			t.Fatalf("recent run %d dropped", r)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].Run < got[i-1].Run {
			t.Fatal("out of order")
		}
	}
}
