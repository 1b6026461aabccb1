package collect_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// TestCrowdSpreadsLeasesPastOnePerComparison has more participants hold
// questions of a landmark-k1 study than it has comparisons (a crowd with
// think time: each participant holds a question open and one ahead, each a
// lease): 20 participants, 40 leases, 12 comparisons wanted 10 times each,
// nothing answered. The leases must stay spread over the comparisons (at
// most one more on any than on another, but for a participant's own
// comparisons, so at most 5 here) and the process's level must follow the
// crowd up (capLevel). With a cap of one lease per comparison the claims
// fell through to claimAnySQL, which took the first comparison in the
// design's order every time: 10 leases on it, one on most.
func TestCrowdSpreadsLeasesPastOnePerComparison(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, schs := designStore(pool)
	// 6 items, 3 landmarks: (6−3)·C(3,2) + 3·C(2,2) = 12 comparisons.
	st := designStudy(t, s, "crowd", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 3, Repeats: 10}, 6, 10)
	const m = 20
	for i := range m {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("p", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Question == nil || pr.Ahead == nil {
			t.Fatalf("participant %d: question %v, ahead %v", i, pr.Question, pr.Ahead)
		}
		for _, q := range []*study.Question{pr.Question, pr.Ahead} {
			if q.Design != study.DesignLandmarkK1 {
				t.Fatalf("participant %d: a %s question, want a landmark-k1 one (40 leases fit in 12 comparisons × 10)", i, q.Design)
			}
		}
	}
	var rows, leases, lo, hi int
	if err := pool.QueryRow(ctx, `SELECT count(*), sum(taken), min(taken), max(taken) FROM design_pool WHERE study_id = $1`,
		st.ID).Scan(&rows, &leases, &lo, &hi); err != nil {
		t.Fatal(err)
	}
	if rows != 12 || leases != 2*m {
		t.Fatalf("pool: %d rows holding %d leases, want 12 rows holding %d", rows, leases, 2*m)
	}
	t.Logf("leases per comparison: %d to %d; level %d", lo, hi, schs[study.DesignLandmarkK1].Level(st.ID, 0))
	if hi > 5 || hi-lo > 2 {
		t.Errorf("leases per comparison: %d to %d, want them spread (at most 5, within 2 of each other)", lo, hi)
	}
	if l := schs[study.DesignLandmarkK1].Level(st.ID, 0); l < 3 || l > 5 {
		t.Errorf("level %d after 40 leases on 12 comparisons, want 3 to 5", l)
	}
}
