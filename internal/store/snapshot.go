package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// Snapshot is one study as of one moment, for an export (internal/studyfile
// writes it as a bundle): every method reads in the same read-only
// repeatable-read transaction, so the settings, items, participants and
// answers agree with each other whatever is written meanwhile. It is only
// valid within the function given to ExportSnapshot, and not safe for
// concurrent use.
type Snapshot struct {
	study study.Study // read first, so the snapshot starts with it
	ctx   context.Context
	tx    pgx.Tx
}

// Study is the study.
func (sn *Snapshot) Study() study.Study { return sn.study }

// ExportSnapshot calls f with the study with studyID (even one being
// deleted) as of one moment; its error is KindNotFound when there is no
// such study.
func (s *Store) ExportSnapshot(ctx context.Context, studyID int64, f func(sn study.SnapshotReader) error) (err error) {
	defer wrap(&err, "store.ExportSnapshot(%d)", studyID)
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		st, err := scanStudy(tx.QueryRow(ctx, `SELECT `+studyCols+` FROM studies WHERE id = $1`, studyID))
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		return f(&Snapshot{study: st, ctx: ctx, tx: tx})
	})
}

// Settings are the study's dashboard settings (the defaults if it never
// set any).
func (sn *Snapshot) Settings() (_ study.RecomputeSettings, err error) {
	defer wrap(&err, "store.Snapshot.Settings()")
	return recomputeSettings(sn.ctx, sn.tx, sn.study.ID)
}

// DesignConfig is the design's settings as stored (studies.design_config).
func (sn *Snapshot) DesignConfig() (_ json.RawMessage, err error) {
	defer wrap(&err, "store.Snapshot.DesignConfig()")
	var raw json.RawMessage
	err = sn.tx.QueryRow(sn.ctx, `SELECT design_config FROM studies WHERE id = $1`, sn.study.ID).Scan(&raw)
	return raw, err
}

// Items calls f with each item, by index.
func (sn *Snapshot) Items(f func(study.SnapshotItem) error) (err error) {
	defer wrap(&err, "store.Snapshot.Items()")
	rows, err := sn.tx.Query(sn.ctx, `SELECT idx, kind, label, file_name, content_type, sha256, width, height, data, coalesce(text, '')
		FROM items WHERE study_id = $1 ORDER BY idx`, sn.study.ID)
	if err != nil {
		return err
	}
	var it study.SnapshotItem
	_, err = pgx.ForEachRow(rows, []any{&it.Index, &it.Kind, &it.Label, &it.FileName, &it.ContentType, &it.SHA256, &it.Width, &it.Height, &it.Data, &it.Text},
		func() error { return f(it) })
	return err
}

// Participants calls f with each participant, in the order they came;
// preview sessions (issue 26) are no part of a bundle.
func (sn *Snapshot) Participants(f func(study.SnapshotParticipant) error) (err error) {
	defer wrap(&err, "store.Snapshot.Participants()")
	rows, err := sn.tx.Query(sn.ctx, `SELECT public_id, coalesce(external_id, ''), coalesce(completion_code, ''),
		created_at, completed_at, excluded_at, arm FROM participants WHERE study_id = $1 AND NOT preview ORDER BY id`, sn.study.ID)
	if err != nil {
		return err
	}
	var p study.SnapshotParticipant
	_, err = pgx.ForEachRow(rows, []any{&p.PublicID, &p.ExternalID, &p.CompletionCode, &p.CreatedAt, &p.CompletedAt, &p.ExcludedAt, &p.Arm},
		func() error { return f(p) })
	return err
}

// Answers calls f with each answer, by answer time (then question id),
// but for those of preview sessions; a trial's with its question's anchor,
// options and choices. f must copy the slices to keep them past its call
// (the next row's scan may reuse them).
func (sn *Snapshot) Answers(f func(study.SnapshotAnswer) error) (err error) {
	defer wrap(&err, "store.Snapshot.Answers()")
	rows, err := sn.tx.Query(sn.ctx, `
		SELECT a.question_id, p.public_id, a.anchor, q.left_idx, q.right_idx, a.closer, a.farther, q.design,
			a.response_ms, q.issued_at, a.answered_at, q.anchor, q.options, a.choices
		FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND NOT p.preview ORDER BY a.answered_at, a.question_id`, sn.study.ID)
	if err != nil {
		return err
	}
	var a study.SnapshotAnswer
	_, err = pgx.ForEachRow(rows, []any{&a.QuestionID, &a.Participant, &a.Anchor, &a.Left, &a.Right, &a.Closer, &a.Farther, &a.Design,
		&a.ResponseMS, &a.AskedAt, &a.AnsweredAt, &a.QuestionAnchor, &a.Options, &a.Choices}, func() error { return f(a) })
	return err
}
