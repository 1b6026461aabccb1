package collect

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A study bundle is a zip that backs up one study independently of the app
// version it came from (documented in docs/dashboard.md):
//
//	manifest.json      {"format": "closer-study-bundle", "version": 1, "exported_at", "counts"}
//	study.json         the study's settings, its design's settings and its dashboard settings
//	items.csv          index,label,file_name,content_type,sha256,width,height,image
//	images/...         the image bytes (the image column names the file; empty for label-only items)
//	participants.csv   participant,external_id,completion_code,created_at,completed_at,excluded_at
//	answers.csv        question_id,participant,anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at
//
// Times are RFC 3339 UTC with microseconds; empty cells are unknown values.
// Readers accept any version up to BundleVersion and ignore unknown files and
// JSON fields, so later versions only add. Version 2 writes its CSV cells
// through csvsafe.Cell (a formula-like label or external id gets a leading
// single quote, so the files are safe to open in a spreadsheet); readers
// undo it with csvsafe.Unescape for version 2 and later only, so a quote
// that a version 1 bundle holds stays as it was.
const (
	BundleFormat  = "closer-study-bundle"
	BundleVersion = 2
)

// bundleEscapedFrom is the first bundle version whose CSV cells are
// neutralised with csvsafe.Cell.
const bundleEscapedFrom = 2

// Bundle CSV columns, in order.
var (
	BundleItemColumns        = []string{"index", "label", "file_name", "content_type", "sha256", "width", "height", "image"}
	BundleParticipantColumns = []string{"participant", "external_id", "completion_code", "created_at", "completed_at", "excluded_at"}
	BundleAnswerColumns      = []string{"question_id", "participant", "anchor", "left", "right", "closer", "farther", "design", "response_ms", "asked_at", "answered_at"}
)

// BundleManifest is manifest.json.
type BundleManifest struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	ExportedAt time.Time      `json:"exported_at"`
	Counts     map[string]int `json:"counts"`
}

// BundleStudy is study.json.
type BundleStudy struct {
	Slug                    string `json:"slug"`
	Title                   string `json:"title"`
	Instructions            string `json:"instructions"`
	Debrief                 string `json:"debrief"`
	QuestionsPerParticipant int    `json:"questions_per_participant"`
	Status                  string `json:"status"`
	Design                  string `json:"design"`
	// DesignConfig is the design's settings as stored (studies.design_config).
	DesignConfig json.RawMessage `json:"design_config,omitempty"`
	Recompute    BundleSettings  `json:"recompute"`
}

// BundleSettings are the dashboard settings in study.json.
type BundleSettings struct {
	MinNewAnswers int    `json:"min_new_answers"`
	MaxAgeSeconds int    `json:"max_age_seconds"`
	Method        string `json:"method"`
	Dim           int    `json:"dim"`
	Clusters      int    `json:"clusters"`
}

const bundleTime = "2006-01-02T15:04:05.999999Z07:00"

func fmtTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(bundleTime)
}

// ExportBundle writes the study's bundle (a zip) to w, read from one snapshot.
func (s *Store) ExportBundle(ctx context.Context, studyID int64, w io.Writer) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		st, err := scanStudy(tx.QueryRow(ctx, `SELECT `+studyCols+` FROM studies WHERE id = $1`, studyID))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("study")
		}
		if err != nil {
			return err
		}
		rs, err := s.RecomputeSettings(ctx, studyID)
		if err != nil {
			return err
		}
		zw := zip.NewWriter(w)
		counts := map[string]int{}
		writeCSV := func(name string, header []string, rows func(cw *csvsafe.Writer) (int, error)) error {
			f, err := zw.Create(name)
			if err != nil {
				return err
			}
			cw := csvsafe.NewWriter(f)
			if err := cw.Write(header); err != nil {
				return err
			}
			n, err := rows(cw)
			if err != nil {
				return err
			}
			counts[strings.TrimSuffix(name, ".csv")] = n
			cw.Flush()
			return cw.Error()
		}
		bs := BundleStudy{Slug: st.Slug, Title: st.Title, Instructions: st.Instructions, Debrief: st.Debrief,
			QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design,
			Recompute: BundleSettings{rs.MinNewAnswers, int(rs.MaxAge / time.Second), rs.Method, rs.Dim, rs.Clusters}}
		if err := tx.QueryRow(ctx, `SELECT design_config FROM studies WHERE id = $1`, studyID).Scan(&bs.DesignConfig); err != nil {
			return err
		}
		if err := writeJSONFile(zw, "study.json", bs); err != nil {
			return err
		}

		// Items, with their images stored (not deflated: they are compressed already).
		rows, err := tx.Query(ctx, `SELECT idx, label, file_name, content_type, sha256, width, height, data
			FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
		if err != nil {
			return err
		}
		type img struct {
			name string
			data []byte
		}
		var imgs []img
		err = writeCSV("items.csv", BundleItemColumns, func(cw *csvsafe.Writer) (int, error) {
			n := 0
			var idx, wd, ht int
			var label, file, ct, sum string
			var data []byte
			_, err := pgx.ForEachRow(rows, []any{&idx, &label, &file, &ct, &sum, &wd, &ht, &data}, func() error {
				name := ""
				if data != nil {
					name = fmt.Sprintf("images/%d-%s", idx, path.Base(strings.ReplaceAll(file, "\\", "/")))
					imgs = append(imgs, img{name, data})
				}
				n++
				return cw.Write([]string{strconv.Itoa(idx), label, file, ct, sum, strconv.Itoa(wd), strconv.Itoa(ht), name})
			})
			return n, err
		})
		if err != nil {
			return err
		}
		for _, im := range imgs {
			f, err := zw.CreateHeader(&zip.FileHeader{Name: im.name, Method: zip.Store, Modified: time.Now()})
			if err != nil {
				return err
			}
			if _, err := f.Write(im.data); err != nil {
				return err
			}
		}

		rows, err = tx.Query(ctx, `SELECT public_id, coalesce(external_id, ''), coalesce(completion_code, ''),
			created_at, completed_at, excluded_at FROM participants WHERE study_id = $1 ORDER BY id`, studyID)
		if err != nil {
			return err
		}
		err = writeCSV("participants.csv", BundleParticipantColumns, func(cw *csvsafe.Writer) (int, error) {
			n := 0
			var pid, ext, code string
			var created time.Time
			var completed, excluded *time.Time
			_, err := pgx.ForEachRow(rows, []any{&pid, &ext, &code, &created, &completed, &excluded}, func() error {
				n++
				return cw.Write([]string{pid, ext, code, fmtTime(&created), fmtTime(completed), fmtTime(excluded)})
			})
			return n, err
		})
		if err != nil {
			return err
		}

		rows, err = tx.Query(ctx, `
			SELECT a.question_id, p.public_id, a.anchor, q.left_idx, q.right_idx, a.closer, a.farther, q.design,
				a.response_ms, q.issued_at, a.answered_at
			FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
			WHERE a.study_id = $1 ORDER BY a.answered_at, a.question_id`, studyID)
		if err != nil {
			return err
		}
		err = writeCSV("answers.csv", BundleAnswerColumns, func(cw *csvsafe.Writer) (int, error) {
			n := 0
			var qid, pid, design string
			var anchor, left, right, closer, farther int
			var ms *int
			var asked, answered time.Time
			itoa := strconv.Itoa
			_, err := pgx.ForEachRow(rows, []any{&qid, &pid, &anchor, &left, &right, &closer, &farther, &design, &ms, &asked, &answered}, func() error {
				n++
				m := ""
				if ms != nil {
					m = itoa(*ms)
				}
				return cw.Write([]string{qid, pid, itoa(anchor), itoa(left), itoa(right), itoa(closer), itoa(farther),
					design, m, fmtTime(&asked), fmtTime(&answered)})
			})
			return n, err
		})
		if err != nil {
			return err
		}
		if err := writeJSONFile(zw, "manifest.json", BundleManifest{Format: BundleFormat, Version: BundleVersion,
			ExportedAt: time.Now().UTC(), Counts: counts}); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("export bundle: %w", err)
	}
	return nil
}

func writeJSONFile(zw *zip.Writer, name string, v any) error {
	f, err := zw.Create(name)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ImportBundle creates a new study from a bundle (r holds size bytes). slug,
// when not empty, replaces the bundle's slug. Participants and questions get
// new ids (ids are unique across the database); items, answers, response
// times and times are restored as they were. An open study is restored as
// paused, so it collects nothing until the researcher opens it.
//
// The bundle is read as streams within lim (bundleReader): every image is
// checked like an upload and must be what items.csv says, every row is
// checked, and each CSV must have the rows manifest.json counts. Rows go to
// PostgreSQL with COPY as they are read, in one transaction: a refused
// bundle stores nothing.
func (s *Store) ImportBundle(ctx context.Context, r io.ReaderAt, size int64, slug string, lim BundleLimits) (Study, ImportReport, error) {
	fail := func(err error) (Study, ImportReport, error) {
		return Study{}, ImportReport{}, fmt.Errorf("import bundle: %w", err)
	}
	br, err := openBundle(r, size, lim)
	if err != nil {
		return fail(err)
	}
	bs := br.study
	if slug = strings.TrimSpace(slug); slug != "" {
		bs.Slug = slug
	}
	if bs.Status == StatusOpen {
		bs.Status = StatusPaused
	}
	var st Study
	var rep ImportReport
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		sin := StudyInput{Slug: bs.Slug, Title: bs.Title, Instructions: bs.Instructions, Debrief: bs.Debrief,
			QuestionsPerParticipant: bs.QuestionsPerParticipant, Status: bs.Status, Design: bs.Design}
		if err := s.check(&sin); err != nil {
			return err
		}
		if st, err = insertStudy(ctx, tx, sin); err != nil {
			return err
		}
		rs := RecomputeSettings{MinNewAnswers: bs.Recompute.MinNewAnswers, MaxAge: time.Duration(bs.Recompute.MaxAgeSeconds) * time.Second,
			Method: bs.Recompute.Method, Dim: bs.Recompute.Dim, Clusters: bs.Recompute.Clusters}
		if rs.Method == "" {
			rs = DefaultRecomputeSettings()
		}
		if err := checkRecomputeSettings(rs); err != nil {
			return err
		}
		if err := setRecomputeSettings(ctx, tx, st.ID, rs); err != nil {
			return err
		}
		if len(bs.DesignConfig) > 0 {
			var dc DesignConfig
			if err := json.Unmarshal(bs.DesignConfig, &dc); err != nil {
				return invalidBundle("study.json: design_config: %v", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE studies SET design_config = $2 WHERE id = $1`, st.ID, bs.DesignConfig); err != nil {
				return err
			}
		}

		items, err := br.items()
		if err != nil {
			return err
		}
		defer items.Close()
		n, err := tx.CopyFrom(ctx, pgx.Identifier{"items"},
			[]string{"study_id", "idx", "label", "file_name", "content_type", "sha256", "width", "height", "data"},
			copySource(items, func(it bundleItem) []any {
				return []any{st.ID, it.index, it.label, it.fileName, it.contentType, it.sha256, it.width, it.height, it.data}
			}))
		if err := copyErr(items, err, "items.csv"); err != nil {
			return err
		}
		rep.Items = int(n)

		parts, err := br.participants()
		if err != nil {
			return err
		}
		defer parts.Close()
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE bundle_participants (
				line int NOT NULL, bundle_id text PRIMARY KEY, public_id text NOT NULL, token_hash bytea NOT NULL,
				external_id text NOT NULL, completion_code text NOT NULL,
				created_at timestamptz NOT NULL, completed_at timestamptz, excluded_at timestamptz) ON COMMIT DROP`); err != nil {
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"bundle_participants"},
			[]string{"line", "bundle_id", "public_id", "token_hash", "external_id", "completion_code", "created_at", "completed_at", "excluded_at"},
			copySource(parts, func(p bundleParticipant) []any {
				return []any{parts.Line(), p.id, newID(), hashToken(newToken()), p.externalID, p.completionCode, p.created, p.completed, p.excluded}
			}))
		var pe *pgconn.PgError
		if parts.Err() == nil && isUnique(err, "") && errors.As(err, &pe) {
			return invalidBundle("participants.csv names a participant twice (%s)", pe.Detail)
		}
		if err := copyErr(parts, err, "participants.csv"); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO participants (public_id, study_id, token_hash, external_id, completion_code, created_at, completed_at, excluded_at)
			SELECT public_id, $1, token_hash, nullif(external_id, ''), nullif(completion_code, ''), created_at, completed_at, excluded_at
			FROM bundle_participants ORDER BY line`, st.ID)
		if err != nil {
			return err
		}
		rep.Participants = int(tag.RowsAffected())
		if _, err := tx.Exec(ctx, `
			CREATE TEMP TABLE import_participants ON COMMIT DROP AS
			SELECT b.bundle_id AS key, p.id AS participant_id
			FROM bundle_participants b JOIN participants p ON p.public_id = b.public_id`); err != nil {
			return err
		}

		ans, err := br.answers(rep.Items)
		if err != nil {
			return err
		}
		defer ans.Close()
		rep.Answers, err = copyAnswers(ctx, tx, st.ID, "answers.csv", ans, func(a bundleAnswer) []any {
			return []any{ans.Line(), newID(), a.participant, a.anchor, a.left, a.right, a.closer, a.farther, a.design, a.ms, a.asked, a.answered}
		})
		return err
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
}

// rowSource is what copySource adapts: bundleRows and triplet rows.
type rowSource[T any] interface {
	Next() bool
	Value() T
	Err() error
}

// copySource turns rows into a pgx.CopyFromSource (COPY pulls one row at a
// time, so memory does not grow with the file).
func copySource[T any](rows rowSource[T], values func(T) []any) pgx.CopyFromSource {
	return &copyRows[T]{rows: rows, values: values}
}

type copyRows[T any] struct {
	rows   rowSource[T]
	values func(T) []any
}

func (c *copyRows[T]) Next() bool             { return c.rows.Next() }
func (c *copyRows[T]) Values() ([]any, error) { return c.values(c.rows.Value()), nil }
func (c *copyRows[T]) Err() error             { return c.rows.Err() }

// copyErr prefers the rows' own error (why reading stopped) to COPY's, and
// names the file when COPY refused a row.
func copyErr[T any](rows rowSource[T], err error, file string) error {
	if rerr := rows.Err(); rerr != nil {
		return rerr
	}
	if isUnique(err, "") {
		return invalidBundle("%s repeats an index or an image", file)
	}
	return err
}
