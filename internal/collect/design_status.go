package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// The SQL of DesignStatusOf, by name so that TestHotQueryPlans explains
// these very strings on a large study.
const (
	// designAnswerCountsSQL counts the answers of study $1's participants
	// in arm $3, those to fallback questions ($2) and to held-out ones, and
	// the arm's active leases.
	designAnswerCountsSQL = `
		SELECT count(*), count(*) FILTER (WHERE q.design = $2), count(*) FILTER (WHERE q.design = 'heldout'),
			(SELECT count(*) FROM design_leases WHERE study_id = $1 AND arm = $3 AND expires_at > now())
		FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND p.arm = $3`
	designProgressSQL = `SELECT items, version, progress, updated_at FROM design_states WHERE study_id = $1 AND arm = $2`
)

// DesignStatuses returns the design status of every arm of study st, in
// the arms' order (one for a study without arms). The study's settings and
// item labels are read once for all the arms.
func (s *Store) DesignStatuses(ctx context.Context, st study.Study) ([]study.DesignStatus, error) {
	cfg, err := s.DesignConfigOf(ctx, st.ID)
	if err != nil {
		return nil, err
	}
	arms := study.ArmsOf(st, cfg)
	labels := s.lazyLabels(ctx, st.ID)
	out := make([]study.DesignStatus, len(arms))
	for i, a := range arms {
		if out[i], err = s.designStatus(ctx, st, i, a, labels); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DesignStatusOf returns the design status of arm `arm` of study st (0 for
// a study without arms).
func (s *Store) DesignStatusOf(ctx context.Context, st study.Study, arm int) (study.DesignStatus, error) {
	cfg, err := s.DesignConfigOf(ctx, st.ID)
	if err != nil {
		return study.DesignStatus{}, err
	}
	arms := study.ArmsOf(st, cfg)
	if arm < 0 || arm >= len(arms) {
		return study.DesignStatus{}, fmt.Errorf("design status: %w", study.NotFound("arm"))
	}
	return s.designStatus(ctx, st, arm, arms[arm], s.lazyLabels(ctx, st.ID))
}

// lazyLabels reads the study's item labels on its first call only.
func (s *Store) lazyLabels(ctx context.Context, studyID int64) func() ([]string, error) {
	return sync.OnceValues(func() ([]string, error) { return store.ItemLabels(ctx, s.pool, studyID) })
}

// designStatus is the design status of arm number arm, a, of study st;
// readLabels gives the study's item labels (asked for a stateful arm only).
func (s *Store) designStatus(ctx context.Context, st study.Study, arm int, a study.Arm, readLabels func() ([]string, error)) (study.DesignStatus, error) {
	ds := study.DesignStatus{Arm: arm, ArmName: a.Name, Share: a.Share, Design: a.Design, Config: a.Config, Stateful: study.IsStateful(a.Design)}
	err := s.pool.QueryRow(ctx, designAnswerCountsSQL, st.ID, study.DesignFallback, arm).Scan(&ds.Answers, &ds.Fallbacks, &ds.Heldout, &ds.ActiveLeases)
	if err != nil {
		return study.DesignStatus{}, fmt.Errorf("design status: %w", err)
	}
	if !ds.Stateful {
		return ds, nil
	}
	labels, err := readLabels()
	if err != nil {
		return study.DesignStatus{}, fmt.Errorf("design status: %w", err)
	}
	var prog []byte
	var updated time.Time
	err = s.pool.QueryRow(ctx, designProgressSQL, st.ID, arm).
		Scan(&ds.Items, &ds.Recorded, &prog, &updated)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		ds.Items = len(labels)
	case err != nil:
		return study.DesignStatus{}, fmt.Errorf("design status: %w", err)
	default:
		ds.Started, ds.UpdatedAt = true, &updated
		if err := json.Unmarshal(prog, &ds.Progress); err != nil {
			return study.DesignStatus{}, fmt.Errorf("design status: %w", err)
		}
	}
	landmarks := ds.Progress.Landmarks
	if (a.Design == study.DesignLandmarkK1 || a.Design == study.DesignLandmarkK2) && ds.Items >= 3 {
		if ds.Progress.Landmark != nil {
			ds.Comparisons, ds.Size = ds.Progress.Landmark.Comparisons, ds.Progress.Landmark.Needed
		} else {
			d, err := landmarkKind.build(ds.Items, a.Design, a.Config)
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
		ref := study.ItemRef{Index: idx}
		if idx < len(labels) {
			ref.Label = labels[idx]
		}
		ds.Landmarks = append(ds.Landmarks, ref)
	}
	return ds, nil
}
