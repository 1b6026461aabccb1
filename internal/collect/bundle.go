package collect

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/triplet"
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
// JSON fields, so later versions only add.
const (
	BundleFormat  = "closer-study-bundle"
	BundleVersion = 1
)

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
		writeCSV := func(name string, header []string, rows func(cw *csv.Writer) (int, error)) error {
			f, err := zw.Create(name)
			if err != nil {
				return err
			}
			cw := csv.NewWriter(f)
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
		err = writeCSV("items.csv", BundleItemColumns, func(cw *csv.Writer) (int, error) {
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
		err = writeCSV("participants.csv", BundleParticipantColumns, func(cw *csv.Writer) (int, error) {
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
		err = writeCSV("answers.csv", BundleAnswerColumns, func(cw *csv.Writer) (int, error) {
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
func (s *Store) ImportBundle(ctx context.Context, r io.ReaderAt, size int64, slug string) (Study, ImportReport, error) {
	fail := func(err error) (Study, ImportReport, error) {
		return Study{}, ImportReport{}, fmt.Errorf("import bundle: %w", err)
	}
	bad := func(format string, args ...any) (Study, ImportReport, error) {
		return fail(userErr(KindInvalid, "not a valid study bundle: "+format, args...))
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return bad("%v", err)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	read := func(name string, limit int64) ([]byte, error) {
		f, ok := files[name]
		if !ok {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s is missing", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s: %v", name, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, limit+1))
		if err != nil {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s: %v", name, err)
		}
		if int64(len(b)) > limit {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s is larger than %d bytes", name, limit)
		}
		return b, nil
	}
	var man BundleManifest
	b, err := read("manifest.json", 1<<20)
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(b, &man); err != nil || man.Format != BundleFormat {
		return bad("manifest.json does not name the format %q", BundleFormat)
	}
	if man.Version < 1 || man.Version > BundleVersion {
		return bad("version %d (this app reads versions 1 to %d)", man.Version, BundleVersion)
	}
	var bs BundleStudy
	if b, err = read("study.json", 1<<20); err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(b, &bs); err != nil {
		return bad("study.json: %v", err)
	}
	if slug = strings.TrimSpace(slug); slug != "" {
		bs.Slug = slug
	}
	if bs.Status == StatusOpen {
		bs.Status = StatusPaused
	}
	readCSV := func(name string, want []string) ([][]string, error) {
		b, err := read(name, 4<<30)
		if err != nil {
			return nil, err
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s: %v", name, err)
		}
		if len(recs) == 0 {
			return nil, userErr(KindInvalid, "not a valid study bundle: %s has no header", name)
		}
		for i, c := range want {
			if i >= len(recs[0]) || recs[0][i] != c {
				return nil, userErr(KindInvalid, "not a valid study bundle: %s: expected the columns %s", name, strings.Join(want, ","))
			}
		}
		return recs[1:], nil
	}
	itemRecs, err := readCSV("items.csv", BundleItemColumns)
	if err != nil {
		return fail(err)
	}
	partRecs, err := readCSV("participants.csv", BundleParticipantColumns)
	if err != nil {
		return fail(err)
	}
	ansRecs, err := readCSV("answers.csv", BundleAnswerColumns)
	if err != nil {
		return fail(err)
	}

	var st Study
	rep := ImportReport{Items: len(itemRecs), Participants: len(partRecs), Answers: len(ansRecs)}
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
				return userErr(KindInvalid, "not a valid study bundle: study.json: design_config: %v", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE studies SET design_config = $2 WHERE id = $1`, st.ID, bs.DesignConfig); err != nil {
				return err
			}
		}
		n := len(itemRecs)
		for line, rec := range itemRecs {
			if len(rec) < len(BundleItemColumns) {
				return userErr(KindInvalid, "items.csv line %d: too few fields", line+2)
			}
			idx, e1 := strconv.Atoi(rec[0])
			wd, e2 := strconv.Atoi(rec[5])
			ht, e3 := strconv.Atoi(rec[6])
			if e1 != nil || e2 != nil || e3 != nil || idx < 0 || idx >= n {
				return userErr(KindInvalid, "items.csv line %d: bad index, width or height", line+2)
			}
			var data []byte
			if rec[7] != "" {
				if data, err = read(rec[7], 1<<30); err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				if hex.EncodeToString(sum[:]) != rec[4] {
					return userErr(KindInvalid, "items.csv line %d: %s does not match its sha256", line+2, rec[7])
				}
			} else if rec[3] != "" {
				return userErr(KindInvalid, "items.csv line %d: an item with a content type needs an image", line+2)
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				st.ID, idx, rec[1], rec[2], rec[3], rec[4], wd, ht, data); err != nil {
				if isUnique(err, "") {
					return userErr(KindInvalid, "items.csv line %d: repeated index or image", line+2)
				}
				return err
			}
		}
		pids := map[string]int64{}
		for line, rec := range partRecs {
			if len(rec) < len(BundleParticipantColumns) {
				return userErr(KindInvalid, "participants.csv line %d: too few fields", line+2)
			}
			var ts [3]*time.Time
			for i, v := range rec[3:6] {
				if v == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return userErr(KindInvalid, "participants.csv line %d: bad time %q", line+2, v)
				}
				ts[i] = &t
			}
			if ts[0] == nil {
				return userErr(KindInvalid, "participants.csv line %d: created_at is empty", line+2)
			}
			var id int64
			if err := tx.QueryRow(ctx, `
				INSERT INTO participants (public_id, study_id, token_hash, external_id, completion_code, created_at, completed_at, excluded_at)
				VALUES ($1, $2, $3, nullif($4, ''), nullif($5, ''), $6, $7, $8) RETURNING id`,
				newID(), st.ID, hashToken(newToken()), rec[1], rec[2], ts[0], ts[1], ts[2]).Scan(&id); err != nil {
				return err
			}
			pids[rec[0]] = id
		}
		ans := make([]importAnswer, len(ansRecs))
		for line, rec := range ansRecs {
			if len(rec) < len(BundleAnswerColumns) {
				return userErr(KindInvalid, "answers.csv line %d: too few fields", line+2)
			}
			var v [5]int
			for i := range v {
				x, err := strconv.Atoi(rec[2+i])
				if err != nil || x < 0 || x >= n {
					return userErr(KindInvalid, "answers.csv line %d: %s is not an item index", line+2, BundleAnswerColumns[2+i])
				}
				v[i] = x
			}
			anchor, left, right, closer, farther := v[0], v[1], v[2], v[3], v[4]
			if anchor == left || anchor == right || left == right ||
				!((closer == left && farther == right) || (closer == right && farther == left)) {
				return userErr(KindInvalid, "answers.csv line %d: closer and farther must be left and right, and differ from the anchor", line+2)
			}
			pid, ok := pids[rec[1]]
			if !ok {
				return userErr(KindInvalid, "answers.csv line %d: unknown participant %q", line+2, rec[1])
			}
			var ms *int
			if rec[8] != "" {
				x, err := strconv.Atoi(rec[8])
				if err != nil || x < 0 || x > MaxResponseMS {
					return userErr(KindInvalid, "answers.csv line %d: bad response_ms", line+2)
				}
				ms = &x
			}
			asked, e1 := time.Parse(time.RFC3339Nano, rec[9])
			answered, e2 := time.Parse(time.RFC3339Nano, rec[10])
			if e1 != nil || e2 != nil {
				return userErr(KindInvalid, "answers.csv line %d: bad asked_at or answered_at", line+2)
			}
			ans[line] = importAnswer{qid: newID(), pid: pid, t: triplet.Triplet{Anchor: anchor, Closer: closer, Farther: farther},
				left: left, right: right, design: rec[7], ms: ms, asked: asked, answered: answered}
		}
		if err := copyAnswers(ctx, tx, st.ID, ans); err != nil {
			if isUnique(err, "") {
				return userErr(KindInvalid, "answers.csv repeats a comparison for one participant")
			}
			return err
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
}
