package collect

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A panic inside the transaction of a question or an answer (a bug; the web
// server turns it into a 500 and goes on) rolls the transaction back and
// returns its connection to the pool: the participant's row is not left
// locked, and the pool can close. (Found by mutants that panic there, which
// hung the package's tests: docs/mutation/collect.md.)
func TestInTxFromPanicRollsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, dbURL := pgtest.NewDB(t)
	// The store gets a pool of its own, closed only if nothing leaked (a
	// leaked connection would make Close wait forever; the database's drop
	// ends its backend).
	own, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if own.Stat().AcquiredConns() == 0 {
			own.Close()
		}
	})
	s := New(own)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "panic", Title: "panic", QuestionsPerParticipant: 3, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"scan", "f"} {
		func() {
			defer func() {
				if v := recover(); v != where {
					t.Errorf("panic in %s: recovered %v", where, v)
				}
			}()
			var lock lockedParticipant
			var pr study.Progress
			_ = s.inTxFrom(ctx, lockParticipantSQL, []any{p.ID},
				func(r pgx.Row) error {
					err := lock.scan(r, &pr)
					if where == "scan" {
						panic(where)
					}
					return err
				},
				func(tx pgx.Tx) error { panic(where) })
		}()
		if n := own.Stat().AcquiredConns(); n != 0 {
			t.Fatalf("after a panic in %s: %d connections still acquired", where, n)
		}
		var id int64
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT id FROM participants WHERE id = $1 FOR UPDATE NOWAIT`, p.ID).Scan(&id)
		}); err != nil {
			t.Errorf("after a panic in %s: the participant's row: %v", where, err)
		}
	}
}
