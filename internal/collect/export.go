package collect

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ExportColumns are the columns of triplets.csv, in order.
var ExportColumns = []string{
	"study", "question_id", "participant", "external_id", "anchor", "closer", "farther",
	"anchor_label", "closer_label", "farther_label", "left", "right", "design",
	"response_ms", "asked_at", "answered_at",
}

// ExportCSV writes the study's answers as triplets.csv to w, one row per
// answer in answer order. Rows are streamed from PostgreSQL and written as
// they arrive, so the size of the export does not bound memory. Times are
// RFC 3339 in UTC; response_ms and external_id are empty when unknown.
func (s *Store) ExportCSV(ctx context.Context, studyID int64, w io.Writer) error {
	rows, err := s.pool.Query(ctx, `
		SELECT s.slug, a.question_id, p.public_id, coalesce(p.external_id, ''),
			a.anchor, a.closer, a.farther, ia.label, ic.label, ifa.label,
			q.left_idx, q.right_idx, q.design, a.response_ms, q.issued_at, a.answered_at
		FROM answers a
		JOIN questions q ON q.id = a.question_id
		JOIN participants p ON p.id = a.participant_id
		JOIN studies s ON s.id = a.study_id
		JOIN items ia ON ia.study_id = a.study_id AND ia.idx = a.anchor
		JOIN items ic ON ic.study_id = a.study_id AND ic.idx = a.closer
		JOIN items ifa ON ifa.study_id = a.study_id AND ifa.idx = a.farther
		WHERE a.study_id = $1
		ORDER BY a.answered_at, a.question_id`, studyID)
	if err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	defer rows.Close()
	cw := csv.NewWriter(w)
	if err := cw.Write(ExportColumns); err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	var (
		slug, qid, pid, ext, la, lc, lf, design string
		anchor, closer, farther, left, right    int
		ms                                      *int
		asked, answered                         time.Time
	)
	rec := make([]string, len(ExportColumns))
	itoa := strconv.Itoa
	for rows.Next() {
		if err := rows.Scan(&slug, &qid, &pid, &ext, &anchor, &closer, &farther, &la, &lc, &lf,
			&left, &right, &design, &ms, &asked, &answered); err != nil {
			return fmt.Errorf("export csv: %w", err)
		}
		msText := ""
		if ms != nil {
			msText = itoa(*ms)
		}
		rec = append(rec[:0], slug, qid, pid, ext, itoa(anchor), itoa(closer), itoa(farther), la, lc, lf,
			itoa(left), itoa(right), design, msText,
			asked.UTC().Format(time.RFC3339Nano), answered.UTC().Format(time.RFC3339Nano))
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("export csv: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	return nil
}
