package store

import (
	"context"

	"github.com/closer-lab/closer/internal/study"
)

// setExcludedSQL excludes a participant or includes them again (by name so
// that TestHotQueryPlans explains this very string on a large study).
const setExcludedSQL = `
	UPDATE participants SET excluded_at = CASE WHEN $3 THEN coalesce(excluded_at, now()) END
	WHERE study_id = $1 AND public_id = $2`

// SetExcluded excludes a participant of the study (or includes them again).
// Their answers are kept; recompute runs leave them out, and so do exports
// unless asked to include them.
func (s *Store) SetExcluded(ctx context.Context, studyID int64, publicID string, excluded bool) (err error) {
	defer wrap(&err, "store.SetExcluded(%d, %q, %t)", studyID, publicID, excluded)
	tag, err := s.pool.Exec(ctx, setExcludedSQL, studyID, publicID, excluded)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return study.NotFound("participant")
	}
	return nil
}

// excludedWithAnswersSQL sums the study's excluded participants who have
// answers as ExclusionSum.Add does: 'x' and the first 15 hex digits of the
// MD5 read as 60 bits (by name so that TestHotQueryPlans explains it). It
// reads the study's participants by study (participants_study), as
// dashboardVersionSQL does, and probes each excluded one's answers by
// participant (answers_participant).
const excludedWithAnswersSQL = `
	SELECT count(*), coalesce(sum(('x' || left(md5(p.id::text), 15))::bit(60)::bigint) % 1152921504606846976, 0)::bigint
	FROM participants p
	WHERE p.study_id = $1 AND p.excluded_at IS NOT NULL AND NOT p.preview
		AND EXISTS (SELECT FROM answers a WHERE a.participant_id = p.id AND a.study_id = $1)`

// ExcludedWithAnswers returns the ExclusionSum of the study's participants
// who are excluded now and have answers: those whose answers a recompute
// run now would leave out as excluded.
func (s *Store) ExcludedWithAnswers(ctx context.Context, studyID int64) (_ study.ExclusionSum, err error) {
	defer wrap(&err, "store.ExcludedWithAnswers(%d)", studyID)
	var e study.ExclusionSum
	if err := s.pool.QueryRow(ctx, excludedWithAnswersSQL, studyID).Scan(&e.Participants, &e.Checksum); err != nil {
		return study.ExclusionSum{}, err
	}
	return e, nil
}
