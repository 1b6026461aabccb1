package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DesignStatus is what a study page shows of the study's design: its
// settings, the planned size before the first question, its progress after,
// and the share of answers that came from random fallback questions.
type DesignStatus struct {
	Design string
	Config DesignConfig
	// Stateful reports a landmark or basis design.
	Stateful bool
	// Started reports that the design's state exists (the first question
	// was issued); Items is then the number of items it covers.
	Started bool
	Items   int
	// Planned size of a landmark design (before and after it started):
	// Comparisons distinct comparisons, Size = Comparisons × repeats answers.
	Comparisons, Size int
	// Landmarks are the landmark items with their labels.
	Landmarks []ItemRef
	// Progress is the design's stored progress (Started only).
	Progress DesignProgress
	// Recorded is the number of answers the design accepted.
	Recorded int64
	// Answers counts the study's answers, Fallbacks those to random
	// fallback questions; ActiveLeases the comparisons out on lease now.
	Answers, Fallbacks, ActiveLeases int
	UpdatedAt                        *time.Time
	// Problem says why the settings do not fit the study's items (empty
	// when they do or when that cannot be known yet).
	Problem string
}

// FallbackShare returns Fallbacks / Answers (0 without answers).
func (s DesignStatus) FallbackShare() float64 {
	if s.Answers == 0 {
		return 0
	}
	return float64(s.Fallbacks) / float64(s.Answers)
}

// The SQL of DesignStatusOf, by name so that TestHotQueryPlans explains
// these very strings on a large study.
const (
	// designAnswerCountsSQL counts the study's answers, those to fallback
	// questions ($2) and the active leases.
	designAnswerCountsSQL = `
		SELECT count(*), count(*) FILTER (WHERE q.design = $2),
			(SELECT count(*) FROM design_leases WHERE study_id = $1 AND expires_at > now())
		FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.study_id = $1`
	designProgressSQL = `SELECT items, version, progress, updated_at FROM design_states WHERE study_id = $1`
)

// DesignStatusOf returns the design status of study st.
func (s *Store) DesignStatusOf(ctx context.Context, st Study) (DesignStatus, error) {
	ds := DesignStatus{Design: st.Design, Stateful: IsStateful(st.Design)}
	cfg, err := s.DesignConfigOf(ctx, st.ID)
	if err != nil {
		return DesignStatus{}, err
	}
	ds.Config = cfg
	err = s.pool.QueryRow(ctx, designAnswerCountsSQL, st.ID, DesignFallback).Scan(&ds.Answers, &ds.Fallbacks, &ds.ActiveLeases)
	if err != nil {
		return DesignStatus{}, fmt.Errorf("design status: %w", err)
	}
	if !ds.Stateful {
		return ds, nil
	}
	labels, err := itemLabels(ctx, s.pool, st.ID)
	if err != nil {
		return DesignStatus{}, fmt.Errorf("design status: %w", err)
	}
	var prog []byte
	var updated time.Time
	err = s.pool.QueryRow(ctx, designProgressSQL, st.ID).
		Scan(&ds.Items, &ds.Recorded, &prog, &updated)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		ds.Items = len(labels)
	case err != nil:
		return DesignStatus{}, fmt.Errorf("design status: %w", err)
	default:
		ds.Started, ds.UpdatedAt = true, &updated
		if err := json.Unmarshal(prog, &ds.Progress); err != nil {
			return DesignStatus{}, fmt.Errorf("design status: %w", err)
		}
	}
	landmarks := ds.Progress.Landmarks
	if st.Design != DesignBasis && ds.Items >= 3 {
		if ds.Progress.Landmark != nil {
			ds.Comparisons, ds.Size = ds.Progress.Landmark.Comparisons, ds.Progress.Landmark.Needed
		} else {
			d, err := landmarkKind.build(ds.Items, st.Design, cfg)
			if err != nil {
				ds.Problem = err.Error()
			} else {
				p := progressOf(d)
				ds.Comparisons, ds.Size = p.Landmark.Comparisons, p.Landmark.Needed
				landmarks = p.Landmarks
			}
		}
	}
	for _, idx := range landmarks {
		ref := ItemRef{Index: idx}
		if idx < len(labels) {
			ref.Label = labels[idx]
		}
		ds.Landmarks = append(ds.Landmarks, ref)
	}
	return ds, nil
}
