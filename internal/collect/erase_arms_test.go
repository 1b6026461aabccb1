package collect_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/pgtest"
)

// A participant's deletion at their request (issue 30) takes them out of
// their arm's count in the same transaction: the counts agree with the
// participants left, and the next participant goes where design.NextArm
// sends them on those counts (the arm that lost one), not where the stale
// count would.
func TestEraseParticipantUncountsTheArm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	st := armStudy(t, s, "erase-arms", threeArms, 0, 5, 10)
	other := armStudy(t, s, "erase-arms-other", threeArms, 0, 5, 10)
	var arms []int
	for i := range 10 {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("w", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		arms = append(arms, p.Arm)
		if _, _, err := s.CreateParticipant(ctx, other.ID, fmt.Sprint("w", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Ten joins fill 5, 3, 2 exactly; w1 is in arm 1 ("third").
	if arms[1] != 1 {
		t.Fatalf("w1 joined arm %d, the test expects 1: %v", arms[1], arms)
	}
	es, err := s.EraseParticipant(ctx, []int64{st.ID}, "w1")
	if err != nil || len(es) != 1 || es[0].Participants != 1 {
		t.Fatalf("erase: %+v, %v", es, err)
	}
	left := participantArms(t, pool, st.ID)
	counts := make([]int, 3)
	for _, a := range left {
		counts[a]++
	}
	stored, err := s.ArmParticipants(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, counts) || !slices.Equal(counts, []int{5, 2, 2}) {
		t.Fatalf("after the deletion arm_counts %v, participants per arm %v; want both [5 2 2]", stored, counts)
	}
	if kept, err := s.ArmParticipants(ctx, other.ID); err != nil || !slices.Equal(kept, []int{5, 3, 2}) {
		t.Fatalf("the other study's counts: %v, %v; want [5 3 2] untouched", kept, err)
	}
	want := design.NextArm([]float64{0.5, 0.3, 0.2}, counts)
	p, _, err := s.CreateParticipant(ctx, st.ID, "w-new", nil)
	if err != nil || p.Arm != want || want != 1 {
		t.Fatalf("the next participant joined arm %d (%v); design.NextArm on %v says %d, the arm that lost one is 1", p.Arm, err, counts, want)
	}
}
