package collect

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/triplet"
)

// What the tests of package collect_test reach inside the store. Defined in
// a _test.go file, so only test builds have them: no code outside the store
// reaches its pool, and the app needs neither helper below.

// PoolOf gives the tests the store's pool, to set up rows and check them
// with their own SQL.
func PoolOf(s *Store) *pgxpool.Pool { return s.pool }

// ExportCSV is ExportCSVWith without the excluded participants' answers.
func (s *Store) ExportCSV(ctx context.Context, studyID int64, w io.Writer) error {
	return s.ExportCSVWith(ctx, studyID, w, false)
}

const votesSQL = `SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1`

// Votes returns a study's vote table.
func (s *Store) Votes(ctx context.Context, studyID int64) (*triplet.Votes, error) {
	rows, err := s.pool.Query(ctx, votesSQL, studyID)
	if err != nil {
		return nil, fmt.Errorf("votes: %w", err)
	}
	defer rows.Close()
	v := triplet.NewVotes()
	for rows.Next() {
		var a, j, k, jc, kc int
		if err := rows.Scan(&a, &j, &k, &jc, &kc); err != nil {
			return nil, fmt.Errorf("votes: %w", err)
		}
		for range jc {
			v.Add(triplet.Triplet{Anchor: a, Closer: j, Farther: k})
		}
		for range kc {
			v.Add(triplet.Triplet{Anchor: a, Closer: k, Farther: j})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("votes: %w", err)
	}
	return v, nil
}

// RecordThenRollBack runs the design writer's recording of arm 0's inbox
// of the study in a transaction that then rolls back, as a writer whose
// commit failed would: the scheduler's cached state is left ahead of the
// database.
func (ds *DesignScheduler) RecordThenRollBack(ctx context.Context, studyID int64) error {
	tx, err := ds.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	key := armKey{studyID, 0}
	row, e, unlock, err := ds.lockState(ctx, tx, key)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := readInbox(ctx, tx, key, inboxBatch)
	if err != nil {
		return err
	}
	_, err = ds.record(ctx, tx, key, row, e, entries)
	return err
}
