package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/triplet"
)

// DesignImport is the design recorded on imported questions.
const DesignImport = "import"

// checkOpenable refuses to open a study that has items without images
// (imported from a triplet CSV): annotators would have nothing to look at.
func checkOpenable(ctx context.Context, tx pgx.Tx, studyID int64) error {
	var missing int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM items WHERE study_id = $1 AND data IS NULL`, studyID).Scan(&missing); err != nil {
		return err
	}
	if missing > 0 {
		return userErr(KindConflict, "this study cannot be opened to annotators: %d of its items have a label but no image (it was imported from a triplet file); create a study with images to collect answers", missing)
	}
	return nil
}

// ImportTripletsInput is a triplet CSV to import as a new study.
type ImportTripletsInput struct {
	Slug  string
	Title string
	// CSV has a header with anchor,closer,farther (or head,winner,loser) and
	// optionally participant, response_ms or response_time_s, and
	// answered_at or asked_at. It is read twice as a stream (first to
	// number the items and participants, then to store the answers), so it
	// is a spooled file rather than bytes in memory.
	CSV io.ReadSeeker
}

// Limits of a triplet import. Memory grows with the distinct item ids and
// participants (at most maxImportIDBytes each), not with the rows.
const (
	MaxImportTriplets     = 5_000_000
	MaxImportItems        = 100_000
	MaxImportParticipants = 100_000
	maxImportIDBytes      = 200
)

// ImportReport says what an import created.
type ImportReport struct {
	Items        int
	Participants int
	Answers      int
}

// ImportTriplets creates a draft study whose items are the file's item ids
// (labels without images, numbered as triplet.ReadCSV numbers them: numeric
// ids in numeric order) and whose answers are the file's rows, one
// participant per value of the participant column (one participant when
// there is none). Everything is created in one transaction, the answers
// with COPY as the file is read. Such a study can be recomputed and
// exported but not opened to annotators.
func (s *Store) ImportTriplets(ctx context.Context, in ImportTripletsInput) (Study, ImportReport, error) {
	fail := func(err error) (Study, ImportReport, error) {
		return Study{}, ImportReport{}, fmt.Errorf("import triplets: %w", err)
	}
	sc, err := scanTriplets(in.CSV)
	if err != nil {
		return fail(err)
	}
	st := Study{}
	rep := ImportReport{Items: len(sc.ids), Participants: len(sc.groups)}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		most := 1
		for _, g := range sc.groups {
			most = max(most, g.rows)
		}
		sin := StudyInput{Slug: in.Slug, Title: in.Title, QuestionsPerParticipant: min(most, 100000),
			Status: StatusDraft, Design: DesignRandom,
			Instructions: "Imported from a triplet file: items have labels and no images."}
		if err := s.check(&sin); err != nil {
			return err
		}
		st, err = insertStudy(ctx, tx, sin)
		if err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"items"},
			[]string{"study_id", "idx", "label", "file_name", "content_type", "sha256", "width", "height"},
			pgx.CopyFromSlice(len(sc.ids), func(i int) ([]any, error) {
				return []any{st.ID, i, sc.ids[i], sc.ids[i], "", fmt.Sprintf("label-%d", i), 0, 0}, nil
			})); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_groups (
				line int NOT NULL, key text PRIMARY KEY, public_id text NOT NULL, token_hash bytea NOT NULL,
				created_at timestamptz NOT NULL) ON COMMIT DROP`); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"import_groups"}, []string{"line", "key", "public_id", "token_hash", "created_at"},
			pgx.CopyFromSlice(len(sc.groups), func(i int) ([]any, error) {
				g := sc.groups[i]
				created := sc.now
				if g.created != nil {
					created = *g.created
				}
				return []any{i, g.key, newID(), hashToken(newToken()), created}, nil
			})); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO participants (public_id, study_id, token_hash, external_id, created_at)
			SELECT public_id, $1, token_hash, nullif(key, ''), created_at FROM import_groups ORDER BY line`, st.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			CREATE TEMP TABLE import_participants ON COMMIT DROP AS
			SELECT g.key, p.id AS participant_id FROM import_groups g JOIN participants p ON p.public_id = g.public_id`); err != nil {
			return err
		}
		// Second pass: the same rows (the file is unchanged), now as answers.
		if _, err := in.CSV.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read the file again: %w", err)
		}
		rows, err := sc.rows(in.CSV)
		if err != nil {
			return err
		}
		rep.Answers, err = copyAnswers(ctx, tx, st.ID, "the file", rows, func(a tripletAnswer) []any {
			return []any{a.line, newID(), a.group, a.t.Anchor, min(a.t.Closer, a.t.Farther), max(a.t.Closer, a.t.Farther),
				a.t.Closer, a.t.Farther, DesignImport, a.ms, a.at, a.at}
		})
		if err == nil && rep.Answers != sc.triplets {
			return errors.New("the file changed between two reads")
		}
		return err
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
}

// tripletScan is the first pass over a triplet file: its item ids in
// index order and its participants, each row checked.
type tripletScan struct {
	ids      []string
	index    map[string]int
	groups   []tripletGroup // in order of first appearance
	group    map[string]int // key -> position in groups
	triplets int
	numbered bool      // the scan is over: rows get item indices
	now      time.Time // the time of rows without one
}

type tripletGroup struct {
	key     string
	rows    int
	created *time.Time // the time of its first row, if the file has times
}

// scanTriplets reads a triplet file once, checking every row.
func scanTriplets(r io.Reader) (*tripletScan, error) {
	sc := &tripletScan{index: map[string]int{}, group: map[string]int{}, now: time.Now().UTC()}
	rows, err := sc.rows(r)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		a := rows.Value()
		for _, id := range [3]string{a.ids[0], a.ids[1], a.ids[2]} {
			if _, ok := sc.index[id]; !ok {
				if len(sc.ids) == MaxImportItems {
					return nil, userErr(KindInvalid, "line %d: more than %d distinct items (the limit)", a.line, MaxImportItems)
				}
				id = strings.Clone(id)
				sc.index[id] = len(sc.ids)
				sc.ids = append(sc.ids, id)
			}
		}
		gi, ok := sc.group[a.group]
		if !ok {
			if len(sc.groups) == MaxImportParticipants {
				return nil, userErr(KindInvalid, "line %d: more than %d participants (the limit)", a.line, MaxImportParticipants)
			}
			gi = len(sc.groups)
			key := strings.Clone(a.group)
			sc.group[key] = gi
			sc.groups = append(sc.groups, tripletGroup{key: key, created: a.at})
		}
		sc.groups[gi].rows++
		sc.triplets++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if sc.triplets == 0 {
		return nil, userErr(KindInvalid, "no triplets after the header")
	}
	triplet.SortIDs(sc.ids)
	for i, id := range sc.ids {
		sc.index[id] = i
	}
	sc.numbered = true
	return sc, nil
}

// tripletAnswer is one checked row of a triplet file.
type tripletAnswer struct {
	line  int
	ids   [3]string // anchor, closer, farther as written
	t     triplet.Triplet
	group string
	ms    *int
	at    *time.Time
}

// tripletRows reads the rows of a triplet file with their optional
// columns; once the file was scanned, it also numbers the items.
type tripletRows struct {
	sc                 *tripletScan
	rs                 *triplet.Rows
	msCol, sCol, atCol int
	cur                tripletAnswer
	err                error
}

// rows opens r for a pass over its rows.
func (sc *tripletScan) rows(r io.Reader) (*tripletRows, error) {
	rs, err := triplet.NewRows(r, triplet.ReadOptions{MaxRows: MaxImportTriplets})
	if err != nil {
		return nil, userErr(KindInvalid, "%v", err)
	}
	if rs.Column("participant") >= 0 {
		if err := rs.GroupBy("participant"); err != nil {
			return nil, userErr(KindInvalid, "%v", err)
		}
	}
	tr := &tripletRows{sc: sc, rs: rs, msCol: -1, sCol: -1, atCol: -1}
	if c := rs.Column("response_ms"); c >= 0 {
		tr.msCol = c
	} else {
		tr.sCol = rs.Column("response_time_s")
	}
	if c := rs.Column("answered_at"); c >= 0 {
		tr.atCol = c
	} else {
		tr.atCol = rs.Column("asked_at")
	}
	return tr, nil
}

func (tr *tripletRows) Next() bool {
	if tr.err != nil || !tr.rs.Next() {
		return false
	}
	row := tr.rs.Row()
	a := tripletAnswer{line: row.Line, ids: [3]string{row.Anchor, row.Closer, row.Farther}, group: row.Group}
	fail := func(format string, args ...any) bool {
		tr.err = userErr(KindInvalid, "line %d: "+format, append([]any{row.Line}, args...)...)
		return false
	}
	for i, v := range [4]string{row.Anchor, row.Closer, row.Farther, row.Group} {
		what := [4]string{"anchor", "closer", "farther", "participant"}[i]
		if len(v) > maxImportIDBytes {
			return fail("%s is longer than %d bytes", what, maxImportIDBytes)
		}
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return fail("%s holds a NUL byte or invalid UTF-8", what)
		}
	}
	field := func(c int) string {
		if c < 0 || c >= len(row.Record) {
			return ""
		}
		return strings.TrimSpace(row.Record[c])
	}
	// Response times outside 0..MaxResponseMS (real logs have negative
	// ones from clock changes) are kept as unknown.
	if v := field(tr.msCol); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return fail("response_ms %q is not a number of milliseconds", v)
		}
		if ms >= 0 && ms <= MaxResponseMS {
			a.ms = &ms
		}
	}
	if v := field(tr.sCol); v != "" {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(sec) {
			return fail("response_time_s %q is not a number of seconds", v)
		}
		if sec >= 0 && sec*1000 <= MaxResponseMS {
			ms := int(math.Round(sec * 1000))
			a.ms = &ms
		}
	}
	if v := field(tr.atCol); v != "" {
		t, err := parseTime(v)
		if err != nil {
			return fail("%q is not a time (RFC 3339 or 2006-01-02 15:04:05)", v)
		}
		a.at = &t
	}
	if tr.sc.numbered {
		var idx [3]int
		for i, id := range a.ids {
			x, ok := tr.sc.index[id]
			if !ok {
				tr.err = errors.New("the file changed between two reads")
				return false
			}
			idx[i] = x
		}
		a.t = triplet.Triplet{Anchor: idx[0], Closer: idx[1], Farther: idx[2]}
		if a.at == nil {
			now := tr.sc.now
			a.at = &now
		}
	}
	tr.cur = a
	return true
}

func (tr *tripletRows) Value() tripletAnswer { return tr.cur }

func (tr *tripletRows) Err() error {
	if tr.err != nil {
		return tr.err
	}
	if err := tr.rs.Err(); err != nil {
		return userErr(KindInvalid, "%v", err)
	}
	return nil
}

// insertStudy inserts a checked study in tx.
func insertStudy(ctx context.Context, tx pgx.Tx, in StudyInput) (Study, error) {
	st, err := scanStudy(tx.QueryRow(ctx, `
		INSERT INTO studies (slug, title, instructions, debrief, questions_per_participant, status, design)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+studyCols,
		in.Slug, in.Title, in.Instructions, in.Debrief, in.QuestionsPerParticipant, in.Status, in.Design))
	if isUnique(err, "") {
		return Study{}, userErr(KindConflict, "the URL slug %q is taken", in.Slug)
	}
	return st, err
}

// copyAnswers stores imported answers with their questions and votes.
// rows are copied (as values gives them: line, question id, participant
// key, anchor, left, right, closer, farther, design, response_ms, asked_at,
// answered_at) into a temporary table as they are read; each participant
// key must be in the temporary table import_participants (key,
// participant_id). file names the rows in messages.
func copyAnswers[T any](ctx context.Context, tx pgx.Tx, studyID int64, file string, rows rowSource[T], values func(T) []any) (int, error) {
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_answers (
			line int NOT NULL, qid text NOT NULL, participant text NOT NULL,
			anchor int NOT NULL, left_idx int NOT NULL, right_idx int NOT NULL, closer int NOT NULL, farther int NOT NULL,
			design text NOT NULL, response_ms int, asked_at timestamptz NOT NULL, answered_at timestamptz NOT NULL) ON COMMIT DROP`); err != nil {
		return 0, err
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"import_answers"},
		[]string{"line", "qid", "participant", "anchor", "left_idx", "right_idx", "closer", "farther", "design", "response_ms", "asked_at", "answered_at"},
		copySource(rows, values))
	if rerr := rows.Err(); rerr != nil {
		return 0, rerr
	}
	if err != nil {
		return 0, fmt.Errorf("answers: %w", err)
	}
	if _, err := tx.Exec(ctx, `ANALYZE import_answers`); err != nil {
		return 0, err
	}
	var line int
	var who string
	err = tx.QueryRow(ctx, `SELECT a.line, a.participant FROM import_answers a
		WHERE NOT EXISTS (SELECT 1 FROM import_participants p WHERE p.key = a.participant)
		ORDER BY a.line LIMIT 1`).Scan(&line, &who)
	if err == nil {
		return 0, userErr(KindInvalid, "%s line %d: unknown participant %q", file, line, who)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at, answered_at)
		SELECT a.qid, $1, p.participant_id, a.anchor, a.left_idx, a.right_idx, a.design, a.asked_at, a.answered_at
		FROM import_answers a JOIN import_participants p ON p.key = a.participant ORDER BY a.line`, studyID); err != nil {
		if isUnique(err, "") {
			return 0, userErr(KindInvalid, "%s repeats a comparison for one participant", file)
		}
		return 0, fmt.Errorf("questions: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms, answered_at)
		SELECT a.qid, $1, p.participant_id, a.anchor, a.closer, a.farther, a.response_ms, a.answered_at
		FROM import_answers a JOIN import_participants p ON p.key = a.participant ORDER BY a.line`, studyID); err != nil {
		return 0, fmt.Errorf("answers: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
		SELECT $1, anchor, least(closer, farther), greatest(closer, farther),
			count(*) FILTER (WHERE closer < farther), count(*) FILTER (WHERE closer > farther)
		FROM answers WHERE study_id = $1
		GROUP BY anchor, least(closer, farther), greatest(closer, farther)`, studyID); err != nil {
		return 0, fmt.Errorf("votes: %w", err)
	}
	return int(n), nil
}

// parseTime accepts RFC 3339 and "2006-01-02 15:04:05[.fraction]" (UTC).
func parseTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("bad time")
}
