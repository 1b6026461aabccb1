package collect

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// queueVotes casts one triplet's vote as before and several in one
// statement, equal keys summed (ON CONFLICT may touch a row only once in
// a statement: two equal keys unsummed would fail the whole answer), on top
// of the votes already there.
func TestQueueVotes(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	s := New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "votes", Title: "votes", QuestionsPerParticipant: 5, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, pool, st.ID, 6)
	send := func(ts ...triplet.Triplet) {
		t.Helper()
		var b pgx.Batch
		queueVotes(&b, st.ID, ts)
		if err := pool.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Sorted by key, as checkTrial leaves them: (0,1,2) twice, once each
	// way, then (1,0,2) and (2,3,4).
	send(triplet.Triplet{Anchor: 0, Closer: 1, Farther: 2}, triplet.Triplet{Anchor: 0, Closer: 2, Farther: 1},
		triplet.Triplet{Anchor: 1, Closer: 2, Farther: 0}, triplet.Triplet{Anchor: 2, Closer: 3, Farther: 4})
	send(triplet.Triplet{Anchor: 0, Closer: 1, Farther: 2})
	send(triplet.Triplet{Anchor: 2, Closer: 4, Farther: 3}, triplet.Triplet{Anchor: 5, Closer: 0, Farther: 1})
	want := map[[3]int][2]int{{0, 1, 2}: {2, 1}, {1, 0, 2}: {0, 1}, {2, 3, 4}: {1, 1}, {5, 0, 1}: {1, 0}}
	rows, err := pool.Query(ctx, `SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[[3]int][2]int{}
	for rows.Next() {
		var a, j, k, jc, kc int
		if err := rows.Scan(&a, &j, &k, &jc, &kc); err != nil {
			t.Fatal(err)
		}
		got[[3]int{a, j, k}] = [2]int{jc, kc}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(got) != len(want) {
		t.Fatalf("votes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("votes of %v: %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
