package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// StoredEstimate is a study's estimate before opening as stored: what it
// assumed and what it found (JSON of internal/estimate's Assumptions and
// Result; Result nil when it failed, Error why).
type StoredEstimate struct {
	Assumed, Result []byte
	Error           string
	CreatedAt       time.Time
}

// SaveEstimate stores the study's estimate, replacing the one before.
func (s *Store) SaveEstimate(ctx context.Context, studyID int64, e StoredEstimate) (err error) {
	defer wrap(&err, "store.SaveEstimate(%d)", studyID)
	_, err = s.pool.Exec(ctx, `
		INSERT INTO study_estimates (study_id, assumed, result, error) VALUES ($1, $2, $3, $4)
		ON CONFLICT (study_id) DO UPDATE SET assumed = $2, result = $3, error = $4, created_at = now()`,
		studyID, e.Assumed, e.Result, e.Error)
	return err
}

// Estimate returns the study's stored estimate (nil: none yet).
func (s *Store) Estimate(ctx context.Context, studyID int64) (_ *StoredEstimate, err error) {
	defer wrap(&err, "store.Estimate(%d)", studyID)
	var e StoredEstimate
	err = s.pool.QueryRow(ctx, `SELECT assumed, result, error, created_at FROM study_estimates WHERE study_id = $1`, studyID).
		Scan(&e.Assumed, &e.Result, &e.Error, &e.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}
