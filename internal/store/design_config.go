package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// Querier is what both a pool and a transaction offer.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ItemLabels returns a study's item labels by index.
func ItemLabels(ctx context.Context, q Querier, studyID int64) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT label FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// DesignConfigOf returns a study's design settings.
func (s *Store) DesignConfigOf(ctx context.Context, studyID int64) (_ study.DesignConfig, err error) {
	defer wrap(&err, "store.DesignConfigOf(%d)", studyID)
	var raw []byte
	err = s.pool.QueryRow(ctx, `SELECT design_config FROM studies WHERE id = $1`, studyID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.DesignConfig{}, study.NotFound("study")
	}
	if err != nil {
		return study.DesignConfig{}, err
	}
	var c study.DesignConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return study.DesignConfig{}, err
	}
	return c, nil
}

// designConfigChanged reports whether a stored config differs from a new one
// in what the design uses.
func designConfigChanged(old []byte, c study.DesignConfig) bool {
	var o study.DesignConfig
	if err := json.Unmarshal(old, &o); err != nil {
		return true
	}
	a, _ := json.Marshal(o)
	b, _ := json.Marshal(c)
	return string(a) != string(b)
}
