package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/study"
)

// SaveRunTrust stores a run's dimension choice, uncertainty and projection
// (a part left out is NULL), replacing any stored before for the run.
func (s *Store) SaveRunTrust(ctx context.Context, runID int64, t *analysis.Trust) (err error) {
	defer wrap(&err, "store.SaveRunTrust(%d)", runID)
	part := func(v any, present bool) ([]byte, error) {
		if !present {
			return nil, nil
		}
		return json.Marshal(v)
	}
	dims, err := part(t.Dimensions, t.Dimensions != nil)
	if err != nil {
		return err
	}
	unc, err := part(t.Uncertainty, t.Uncertainty != nil)
	if err != nil {
		return err
	}
	proj, err := part(t.Projection, t.Projection != nil)
	if err != nil {
		return err
	}
	notes, err := json.Marshal(append([]string{}, t.Notes...))
	if err != nil {
		return err
	}
	var suggested *int
	if t.Dimensions != nil {
		suggested = &t.Dimensions.Suggested
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO recompute_trust (run_id, suggested_dim, dimensions, uncertainty, projection, notes)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (run_id) DO UPDATE SET suggested_dim = $2, dimensions = $3, uncertainty = $4,
			projection = $5, notes = $6, created_at = now()`,
		runID, suggested, dims, unc, proj, notes)
	if isForeignKey(err) {
		return study.NotFound("run")
	}
	return err
}

// RunTrust returns a run's dimension choice, uncertainty and projection,
// or nil if the run stored none.
func (s *Store) RunTrust(ctx context.Context, runID int64) (_ *analysis.Trust, err error) {
	defer wrap(&err, "store.RunTrust(%d)", runID)
	var dims, unc, proj, notes []byte
	err = s.pool.QueryRow(ctx, `SELECT dimensions, uncertainty, projection, notes FROM recompute_trust WHERE run_id = $1`, runID).
		Scan(&dims, &unc, &proj, &notes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := &analysis.Trust{}
	for _, p := range []struct {
		raw []byte
		dst any
	}{{dims, &t.Dimensions}, {unc, &t.Uncertainty}, {proj, &t.Projection}, {notes, &t.Notes}} {
		if p.raw == nil {
			continue
		}
		if err := json.Unmarshal(p.raw, p.dst); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// LatestTrust returns the study's newest stored trust (dimension choice,
// uncertainty, projection) with the id of its run, the answers that run
// used and when it was stored; a nil Trust if no run stored one.
func (s *Store) LatestTrust(ctx context.Context, studyID int64) (runID int64, answers int, at time.Time, _ *analysis.Trust, err error) {
	defer wrap(&err, "store.LatestTrust(%d)", studyID)
	err = s.pool.QueryRow(ctx, `
		SELECT t.run_id, r.answers, t.created_at FROM recompute_trust t JOIN recompute_runs r ON r.id = t.run_id
		WHERE r.study_id = $1 ORDER BY t.run_id DESC LIMIT 1`, studyID).Scan(&runID, &answers, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, time.Time{}, nil, nil
	}
	if err != nil {
		return 0, 0, time.Time{}, nil, err
	}
	t, err := s.RunTrust(ctx, runID)
	return runID, answers, at, t, err
}
