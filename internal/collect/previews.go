package collect

import (
	"context"
	"errors"
	"fmt"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// previewJoinSQL adds a preview participant (issue 26) to study $2: no
// external id, no platform parameters, no arm (arm 0, and arm_counts is
// not touched, so the arms' balance stays the participants').
const previewJoinSQL = `
	INSERT INTO participants (public_id, study_id, token_hash, last_active_at, preview)
	VALUES ($1, $2, $3, now(), true)
	RETURNING id, created_at`

// previewItemsSQL counts study $1's items and the images without their
// bytes (imported from a triplet file): a preview asks questions as the
// study would, which needs three items it can show (a text item keeps no
// bytes and shows its text).
const previewItemsSQL = `SELECT count(*), count(*) FILTER (WHERE kind = 'image' AND data IS NULL) FROM items WHERE study_id = $1`

// CreatePreviewParticipant adds a researcher's preview session to a study
// and returns it with its secret token. A preview is a participant whom
// the study takes whatever its status (a draft included) and platform,
// without an external id; it takes no quota place and no arm, is asked
// random questions and the study's catch and repeat trials (never a
// design's or a held-out question), its answers cast no vote, and its
// questions do not freeze the design and arms (store.QuestionsIssued).
// Results, tallies and exports leave it out unless asked
// (study.ExportOptions.Previews); store.DeletePreviews deletes it.
func (s *Store) CreatePreviewParticipant(ctx context.Context, studyID int64) (study.Participant, string, error) {
	token := secret.NewToken()
	p := study.Participant{PublicID: secret.NewID(), StudyID: studyID, Preview: true}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var n, missing int
		if err := tx.QueryRow(ctx, previewItemsSQL, studyID).Scan(&n, &missing); err != nil {
			return err
		}
		if n < 3 {
			return study.Errorf(study.KindConflict, "a preview asks questions of three items: add at least three items first (the study has %d)", n)
		}
		if missing > 0 {
			return study.Errorf(study.KindConflict, "a preview shows the items' images, and %d of the study's items have a label but no image", missing)
		}
		err := tx.QueryRow(ctx, previewJoinSQL, p.PublicID, studyID, secret.Hash(token)).Scan(&p.ID, &p.CreatedAt)
		if isForeignKeyViolation(err) {
			return study.NotFound("study")
		}
		return err
	})
	if err != nil {
		return study.Participant{}, "", fmt.Errorf("create preview participant(%d): %w", studyID, err)
	}
	return p, token, nil
}

// isForeignKeyViolation reports whether err is PostgreSQL's refusal of a
// row that names a missing one (a study deleted meanwhile).
func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgerrcode.ForeignKeyViolation
}
