package store

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// exportBatch is how many rows one FETCH from the export cursor returns.
const exportBatch = 5000

// The SQL of ExportCSV, by name so that TestHotQueryPlans explains these
// very strings on a large study.
const (
	itemLabelsSQL = `SELECT idx, label FROM items WHERE study_id = $1`
	// exportAnswersSQL is the export cursor's query: the answers of study
	// $1 in answer order, those of excluded participants only when $2,
	// those of preview participants only when $3.
	exportAnswersSQL = `
		SELECT a.question_id, p.public_id, coalesce(p.external_id, ''), a.anchor, a.closer, a.farther,
			q.left_idx, q.right_idx, q.design, a.response_ms, q.issued_at, a.answered_at, p.arm, p.preview, q.options, a.choices
		FROM answers a
		JOIN questions q ON q.id = a.question_id
		JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND ($2 OR p.excluded_at IS NULL) AND ($3 OR NOT p.preview)
		ORDER BY a.answered_at, a.question_id`
	// exportAllAnswersSQL is the all-answers export's query: the triplets
	// and trial_answers (catch and repeat trials, skips) of study $1 in
	// answer order, those of excluded participants only when $2, those of
	// preview participants only when $3.
	exportAllAnswersSQL = `
		SELECT a.question_id, p.public_id, coalesce(p.external_id, ''), a.anchor, a.closer, a.farther,
			q.left_idx, q.right_idx, q.design, a.response_ms, q.issued_at, a.answered_at, p.arm, p.preview, q.options, a.choices, false, NULL::boolean, a.listen_ms
		FROM answers a
		JOIN questions q ON q.id = a.question_id
		JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND ($2 OR p.excluded_at IS NULL) AND ($3 OR NOT p.preview)
		UNION ALL
		SELECT t.question_id, p.public_id, coalesce(p.external_id, ''), q.anchor, t.closer,
			CASE WHEN t.closer = q.left_idx THEN q.right_idx WHEN t.closer = q.right_idx THEN q.left_idx END,
			q.left_idx, q.right_idx, q.design, t.response_ms, q.issued_at, t.answered_at, p.arm, p.preview, q.options,
			CASE WHEN q.options IS NOT NULL AND t.closer IS NOT NULL THEN ARRAY[t.closer] END, t.closer IS NULL, t.correct, NULL::int
		FROM trial_answers t
		JOIN questions q ON q.id = t.question_id
		JOIN participants p ON p.id = t.participant_id
		WHERE t.study_id = $1 AND ($2 OR p.excluded_at IS NULL) AND ($3 OR NOT p.preview)
		ORDER BY 12, 1`
)

// ExportCSVWith writes the study's answers as triplets.csv to w, one row per
// answer in answer order. The rows come from a server-side cursor, fetched
// in batches and written as they arrive, so the export starts at once and
// its size does not bound memory; the cursor reads one snapshot, so the file
// is consistent even while answers keep arriving. Times are RFC 3339 in
// UTC; response_ms and external_id are empty when unknown. Cells a
// spreadsheet would run as formulas (labels and external ids are anyone's
// text) get a leading single quote (package csvsafe).
// The answers of excluded participants are left out unless includeExcluded,
// those of preview sessions always (ExportAnswersCSV includes them on
// request). Only triplets are exported: catch and repeat trials and
// skipped questions are in ExportAllAnswersCSV.
func (s *Store) ExportCSVWith(ctx context.Context, studyID int64, w io.Writer, includeExcluded bool) (err error) {
	defer wrap(&err, "store.ExportCSVWith(%d, %t)", studyID, includeExcluded)
	return s.exportCSV(ctx, studyID, w, study.ExportOptions{Excluded: includeExcluded})
}

// ExportAllAnswersCSV is ExportCSVWith with every answer: the triplets, the
// catch and repeat trials, and the skipped questions (AllAnswersColumns).
func (s *Store) ExportAllAnswersCSV(ctx context.Context, studyID int64, w io.Writer, includeExcluded bool) (err error) {
	defer wrap(&err, "store.ExportAllAnswersCSV(%d, %t)", studyID, includeExcluded)
	return s.exportCSV(ctx, studyID, w, study.ExportOptions{Excluded: includeExcluded, All: true})
}

// ExportAnswersCSV is ExportCSVWith (ExportAllAnswersCSV with o.All) with
// the rows o asks for: with o.Previews the answers of preview sessions
// too, and a last column, preview, saying which rows are theirs.
func (s *Store) ExportAnswersCSV(ctx context.Context, studyID int64, w io.Writer, o study.ExportOptions) (err error) {
	defer wrap(&err, "store.ExportAnswersCSV(%d, %+v)", studyID, o)
	return s.exportCSV(ctx, studyID, w, o)
}

// exportRow is what every row an answer exports shares.
type exportRow struct {
	slug, qid, pid, ext, design, ms, asked, answered, arm string
	skipped, correct, preview, listen                     string
}

// record appends to dst[:0] (nil: a new slice) the row of the columns o
// exports, with the answer's items: anchor, closer and farther with their
// labels, left and right, and (the all-answers export) the format, the
// options and the choices.
func (r exportRow) record(dst []string, o study.ExportOptions, anchor, closer, farther, anchorLabel, closerLabel, fartherLabel,
	left, right, format, options, choices string) []string {
	rec := append(dst[:0], r.slug, r.qid, r.pid, r.ext, anchor, closer, farther, anchorLabel, closerLabel, fartherLabel,
		left, right, r.design, r.ms, r.asked, r.answered, study.ExportKind(r.design))
	if o.All {
		rec = append(rec, r.skipped, r.correct, r.arm, format, options, choices, r.listen)
	} else {
		rec = append(rec, r.arm)
	}
	if o.Previews {
		rec = append(rec, r.preview)
	}
	return rec
}

// joinInts is item indices separated by spaces.
func joinInts(xs []int) string {
	b := make([]byte, 0, 4*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}

func (s *Store) exportCSV(ctx context.Context, studyID int64, w io.Writer, o study.ExportOptions) error {
	// Each export has a cursor name of its own: pgx caches FETCH's
	// description by its text, and the two return different columns.
	query, columns, cursor := exportAnswersSQL, study.ExportColumns, "export"
	if o.All {
		query, columns, cursor = exportAllAnswersSQL, study.AllAnswersColumns, "export_all"
	}
	if o.Previews {
		columns = append(columns[:len(columns):len(columns)], study.PreviewColumn)
	}
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var slug string
		var st study.Study
		err := tx.QueryRow(ctx, `SELECT slug, design, arms, format FROM studies WHERE id = $1 AND deleted_at IS NULL`, studyID).
			Scan(&slug, &st.Design, &st.Arms, &st.Format)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
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
		if _, err := tx.Exec(ctx, `DECLARE `+cursor+` NO SCROLL CURSOR FOR `+query, studyID, o.Excluded, o.Previews); err != nil {
			return err
		}
		cw := csvsafe.NewWriter(w)
		if err := cw.Write(columns); err != nil {
			return err
		}
		var (
			qid, pid, ext, design string
			anchor, left, right   int
			arm                   int
			closer, farther, ms   *int
			listen                *int
			skipped, preview      bool
			correct               *bool
			asked, answered       time.Time
			options, choices      []int
		)
		format := study.MustStudyFormat(st.Format).Format
		rec := make([]string, len(columns))
		itoa := strconv.Itoa
		opt := func(x *int) string {
			if x == nil {
				return ""
			}
			return itoa(*x)
		}
		label := func(x *int) string {
			if x == nil {
				return ""
			}
			return labels[*x]
		}
		for {
			rows, err := tx.Query(ctx, `FETCH `+strconv.Itoa(exportBatch)+` FROM `+cursor)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() {
				n++
				dest := []any{&qid, &pid, &ext, &anchor, &closer, &farther,
					&left, &right, &design, &ms, &asked, &answered, &arm, &preview, &options, &choices}
				if o.All {
					dest = append(dest, &skipped, &correct, &listen)
				}
				if err := rows.Scan(dest...); err != nil {
					rows.Close()
					return err
				}
				if o.NoIdentifying {
					ext = "" // a viewer's export (issue 30)
				}
				row := exportRow{slug: slug, qid: qid, pid: pid, ext: ext, design: design, ms: opt(ms),
					asked: asked.UTC().Format(time.RFC3339Nano), answered: answered.UTC().Format(time.RFC3339Nano), arm: study.ArmName(st, arm)}
				if o.All {
					row.skipped = strconv.FormatBool(skipped)
					row.listen = opt(listen)
					if correct != nil {
						row.correct = strconv.FormatBool(*correct)
					}
				}
				if o.Previews {
					row.preview = strconv.FormatBool(preview)
				}
				var lines [][]string
				switch {
				case options != nil && o.All:
					// One row per trial, with its options and choices.
					query, queryLabel := "", ""
					if format == study.FormatRank {
						query, queryLabel = itoa(anchor), labels[anchor]
					}
					lines = [][]string{row.record(rec, o, query, "", "", queryLabel, "", "", "", "", string(format), joinInts(options), joinInts(choices))}
				case options != nil && choices != nil:
					// triplets.csv: the triplets the trial derives.
					for _, t := range derivedTriplets(anchor, options, choices) {
						lines = append(lines, row.record(nil, o, itoa(t.Anchor), itoa(t.Closer), itoa(t.Farther),
							labels[t.Anchor], labels[t.Closer], labels[t.Farther], "", "", string(format), "", ""))
					}
				default:
					lines = [][]string{row.record(rec, o, itoa(anchor), opt(closer), opt(farther),
						labels[anchor], label(closer), label(farther), itoa(left), itoa(right), string(study.FormatTriplet), "", "")}
				}
				for _, l := range lines {
					if err := cw.Write(l); err != nil {
						rows.Close()
						return err
					}
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
}
