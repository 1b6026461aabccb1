package collect

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SQL of exclusion and the dashboard's participants table, by name so
// that TestHotQueryPlans explains these very strings on a large study.
const (
	setExcludedSQL = `
		UPDATE participants SET excluded_at = CASE WHEN $3 THEN coalesce(excluded_at, now()) END
		WHERE study_id = $1 AND public_id = $2`
	dashboardParticipantsSQL = `
		SELECT p.id, p.public_id, coalesce(p.external_id, ''), c.n, p.excluded_at, p.created_at, count(*) OVER ()
		FROM participants p
		JOIN (SELECT participant_id, count(*) AS n FROM answers WHERE study_id = $1 GROUP BY participant_id) c
			ON c.participant_id = p.id
		ORDER BY c.n DESC, p.id
		LIMIT $2 OFFSET $3`
	answeringParticipantsSQL = `SELECT count(DISTINCT participant_id) FROM answers WHERE study_id = $1`
)

// SetExcluded excludes a participant of the study (or includes them again).
// Their answers are kept; recompute runs leave them out, and so do exports
// unless asked to include them.
func (s *Store) SetExcluded(ctx context.Context, studyID int64, publicID string, excluded bool) error {
	tag, err := s.pool.Exec(ctx, setExcludedSQL, studyID, publicID, excluded)
	if err != nil {
		return fmt.Errorf("set excluded: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set excluded: %w", notFound("participant"))
	}
	return nil
}

// DashboardParticipant is one row of the dashboard's participants table.
type DashboardParticipant struct {
	ID         int64
	PublicID   string
	ExternalID string
	Answers    int
	ExcludedAt *time.Time
	CreatedAt  time.Time
}

// DashboardParticipants returns the study's participants with at least one
// answer, most answers first (at most limit, after skipping offset), and how
// many there are.
func (s *Store) DashboardParticipants(ctx context.Context, studyID int64, limit, offset int) ([]DashboardParticipant, int, error) {
	rows, err := s.pool.Query(ctx, dashboardParticipantsSQL, studyID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("dashboard participants: %w", err)
	}
	total := 0
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DashboardParticipant, error) {
		var p DashboardParticipant
		err := r.Scan(&p.ID, &p.PublicID, &p.ExternalID, &p.Answers, &p.ExcludedAt, &p.CreatedAt, &total)
		return p, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("dashboard participants: %w", err)
	}
	if len(ps) == 0 && offset > 0 {
		// Past the last page the window count has no row to ride on.
		err = s.pool.QueryRow(ctx, answeringParticipantsSQL, studyID).Scan(&total)
		if err != nil {
			return nil, 0, fmt.Errorf("dashboard participants: %w", err)
		}
	}
	return ps, total, nil
}
