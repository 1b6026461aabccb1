package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/csvsafe"
)

// ExportColumns are the columns of triplets.csv, in order.
var ExportColumns = []string{
	"study", "question_id", "participant", "external_id", "anchor", "closer", "farther",
	"anchor_label", "closer_label", "farther_label", "left", "right", "design",
	"response_ms", "asked_at", "answered_at",
}

// exportBatch is how many rows one FETCH from the export cursor returns.
const exportBatch = 5000

// The SQL of ExportCSV, by name so that TestHotQueryPlans explains these
// very strings on a large study.
const (
	itemLabelsSQL = `SELECT idx, label FROM items WHERE study_id = $1`
	// exportAnswersSQL is the export cursor's query: the answers of study
	// $1 in answer order, those of excluded participants only when $2.
	exportAnswersSQL = `
		SELECT a.question_id, p.public_id, coalesce(p.external_id, ''), a.anchor, a.closer, a.farther,
			q.left_idx, q.right_idx, q.design, a.response_ms, q.issued_at, a.answered_at
		FROM answers a
		JOIN questions q ON q.id = a.question_id
		JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND ($2 OR p.excluded_at IS NULL)
		ORDER BY a.answered_at, a.question_id`
)

// ExportCSVWith writes the study's answers as triplets.csv to w, one row per
// answer in answer order. The rows come from a server-side cursor, fetched
// in batches and written as they arrive, so the export starts at once and
// its size does not bound memory; the cursor reads one snapshot, so the file
// is consistent even while answers keep arriving. Times are RFC 3339 in
// UTC; response_ms and external_id are empty when unknown. Cells a
// spreadsheet would run as formulas (labels and external ids are anyone's
// text) get a leading single quote (package csvsafe).
// The answers of excluded participants are left out unless includeExcluded.
func (s *Store) ExportCSVWith(ctx context.Context, studyID int64, w io.Writer, includeExcluded bool) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var slug string
		err := tx.QueryRow(ctx, `SELECT slug FROM studies WHERE id = $1 AND deleted_at IS NULL`, studyID).Scan(&slug)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("study")
		}
		if err != nil {
			return err
		}
		labels := map[int]string{}
		rows, err := tx.Query(ctx, itemLabelsSQL, studyID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var i int
			var l string
			if err := rows.Scan(&i, &l); err != nil {
				return err
			}
			labels[i] = l
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DECLARE export NO SCROLL CURSOR FOR `+exportAnswersSQL, studyID, includeExcluded); err != nil {
			return err
		}
		cw := csvsafe.NewWriter(w)
		if err := cw.Write(ExportColumns); err != nil {
			return err
		}
		var (
			qid, pid, ext, design                string
			anchor, closer, farther, left, right int
			ms                                   *int
			asked, answered                      time.Time
		)
		rec := make([]string, len(ExportColumns))
		itoa := strconv.Itoa
		for {
			rows, err := tx.Query(ctx, `FETCH `+strconv.Itoa(exportBatch)+` FROM export`)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() {
				n++
				if err := rows.Scan(&qid, &pid, &ext, &anchor, &closer, &farther,
					&left, &right, &design, &ms, &asked, &answered); err != nil {
					rows.Close()
					return err
				}
				msText := ""
				if ms != nil {
					msText = itoa(*ms)
				}
				rec = append(rec[:0], slug, qid, pid, ext, itoa(anchor), itoa(closer), itoa(farther),
					labels[anchor], labels[closer], labels[farther], itoa(left), itoa(right), design, msText,
					asked.UTC().Format(time.RFC3339Nano), answered.UTC().Format(time.RFC3339Nano))
				if err := cw.Write(rec); err != nil {
					rows.Close()
					return err
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
			if n < exportBatch {
				return nil
			}
		}
	})
	if err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	return nil
}
