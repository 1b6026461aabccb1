package collect

import (
	"context"
	"fmt"
)

// setExcludedSQL excludes a participant or includes them again (by name so
// that TestHotQueryPlans explains this very string on a large study).
const setExcludedSQL = `
	UPDATE participants SET excluded_at = CASE WHEN $3 THEN coalesce(excluded_at, now()) END
	WHERE study_id = $1 AND public_id = $2`

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
