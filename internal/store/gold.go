package store

import (
	"context"
	"errors"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// SetGoldTriplets replaces the study's gold triplets with gold (none
// clears them), in one transaction. Their items are kept by id, so that a
// renumbering of the items does not change them.
func (s *Store) SetGoldTriplets(ctx context.Context, studyID int64, gold []study.GoldTriplet) (err error) {
	defer wrap(&err, "store.SetGoldTriplets(%d, %d triplets)", studyID, len(gold))
	if len(gold) > study.MaxGoldTriplets {
		return study.Errorf(study.KindInvalid, "more than %d gold triplets (the limit)", study.MaxGoldTriplets)
	}
	lines, a, c, f := make([]int32, len(gold)), make([]int32, len(gold)), make([]int32, len(gold)), make([]int32, len(gold))
	for i, g := range gold {
		lines[i], a[i], c[i], f[i] = int32(g.Line), int32(g.Anchor), int32(g.Closer), int32(g.Farther)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM studies WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, studyID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM gold_triplets WHERE study_id = $1`, studyID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO gold_triplets (study_id, line, anchor_item, closer_item, farther_item)
			SELECT $1, u.line, ia.id, ic.id, iff.id
			FROM unnest($2::int[], $3::int[], $4::int[], $5::int[]) AS u(line, a, c, f)
			JOIN items ia ON ia.study_id = $1 AND ia.idx = u.a
			JOIN items ic ON ic.study_id = $1 AND ic.idx = u.c
			JOIN items iff ON iff.study_id = $1 AND iff.idx = u.f`, studyID, lines, a, c, f)
		if err != nil {
			return err
		}
		if int(tag.RowsAffected()) != len(gold) {
			return study.Errorf(study.KindConflict, "the study's items changed while the gold triplets were read; upload the file again")
		}
		return nil
	})
}

// GoldTripletCount returns how many gold triplets the study has.
func (s *Store) GoldTripletCount(ctx context.Context, studyID int64) (_ int, err error) {
	defer wrap(&err, "store.GoldTripletCount(%d)", studyID)
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM gold_triplets WHERE study_id = $1`, studyID).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}
