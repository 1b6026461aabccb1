package store

import (
	"context"
	"time"

	"github.com/closer-lab/closer/internal/study"
)

// A study's retention of identifying fields (issue 30).

// blankExpiredSQL blanks, in one batch of at most $1 participants, the
// external ids, their lookup keys and the platform parameters of the
// participants of studies closed longer than their retention.
const blankExpiredSQL = `
	UPDATE participants SET external_id = NULL, external_key = NULL, platform_params = NULL
	WHERE id IN (
		SELECT p.id FROM participants p JOIN studies s ON s.id = p.study_id
		WHERE s.retention_days IS NOT NULL AND s.status = 'closed' AND s.closed_at IS NOT NULL
			AND s.closed_at + make_interval(days => s.retention_days) <= now()
			AND (p.external_id IS NOT NULL OR p.external_key IS NOT NULL OR p.platform_params IS NOT NULL)
		LIMIT $1)`

// BlankExpiredIdentifiers blanks the identifying fields of the
// participants of every study closed longer than its retention, in
// batches of batch rows, each its own statement, and returns how many it
// blanked.
func (s *Store) BlankExpiredIdentifiers(ctx context.Context, batch int) (_ int64, err error) {
	defer wrap(&err, "store.BlankExpiredIdentifiers")
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, blankExpiredSQL, batch)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

// Retention is a study's retention setting: days (0: identifying fields
// kept) and when it closed (nil: open or paused).
func (s *Store) Retention(ctx context.Context, studyID int64) (days int, closedAt *time.Time, err error) {
	defer wrap(&err, "store.Retention(%d)", studyID)
	err = s.pool.QueryRow(ctx, `SELECT coalesce(retention_days, 0), closed_at FROM studies WHERE id = $1`, studyID).Scan(&days, &closedAt)
	return days, closedAt, err
}

// SetRetention sets how many days after closing the study's identifying
// fields are blanked (0: kept).
func (s *Store) SetRetention(ctx context.Context, studyID int64, days int) (err error) {
	defer wrap(&err, "store.SetRetention(%d, %d)", studyID, days)
	if days < 0 || days > 36500 {
		return study.Errorf(study.KindInvalid, "the retention must be between 1 and 36500 days, or empty to keep the fields")
	}
	_, err = s.pool.Exec(ctx, `UPDATE studies SET retention_days = nullif($2, 0) WHERE id = $1`, studyID, days)
	return err
}
