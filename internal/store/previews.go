package store

import (
	"context"
)

// Preview sessions (issue 26): a researcher's tries of their own study,
// participants rows marked preview. The engine creates them
// (collect.Store.CreatePreviewParticipant); every read of results leaves
// them out (NotPreviewSQL, "NOT preview"); these are the study page's
// count and its delete button.

// countPreviewsSQL counts study $1's preview sessions through
// participants_preview.
const countPreviewsSQL = `SELECT count(*) FROM participants WHERE study_id = $1 AND preview`

// deletePreviewsSQL deletes study $1's preview participants; their
// questions, answers, trial answers and tokens go with them (ON DELETE
// CASCADE). Their answers cast no vote and reached no design, so nothing
// else holds them.
const deletePreviewsSQL = `DELETE FROM participants WHERE study_id = $1 AND preview`

// CountPreviews returns how many preview sessions the study has.
func (s *Store) CountPreviews(ctx context.Context, studyID int64) (_ int, err error) {
	defer wrap(&err, "store.CountPreviews(%d)", studyID)
	var n int
	if err := s.pool.QueryRow(ctx, countPreviewsSQL, studyID).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// DeletePreviews deletes the study's preview sessions with their questions
// and answers and returns how many there were. A browser still holding one
// of their tokens is then an unknown participant, sent back to the start.
func (s *Store) DeletePreviews(ctx context.Context, studyID int64) (_ int64, err error) {
	defer wrap(&err, "store.DeletePreviews(%d)", studyID)
	tag, err := s.pool.Exec(ctx, deletePreviewsSQL, studyID)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
