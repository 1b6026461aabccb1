package collect

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

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
	// answered_at or asked_at.
	CSV []byte
}

// ImportReport says what an import created.
type ImportReport struct {
	Items        int
	Participants int
	Answers      int
}

// ImportTriplets creates a draft study whose items are the file's item ids
// (labels without images, in triplet.ReadCSV's order: numeric ids in
// numeric order) and whose answers are the file's rows, one participant per
// value of the participant column (one participant when there is none).
// Everything is created in one transaction. Such a study can be recomputed
// and exported but not opened to annotators.
func (s *Store) ImportTriplets(ctx context.Context, in ImportTripletsInput) (Study, ImportReport, error) {
	fail := func(err error) (Study, ImportReport, error) {
		return Study{}, ImportReport{}, fmt.Errorf("import triplets: %w", err)
	}
	header, err := csv.NewReader(bytes.NewReader(in.CSV)).Read()
	if err != nil {
		return fail(userErr(KindInvalid, "the file is not a CSV with a header: %v", err))
	}
	cols := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := cols[h]; !dup {
			cols[h] = i
		}
	}
	opt := triplet.ReadOptions{}
	if _, ok := cols["participant"]; ok {
		opt.GroupBy = "participant"
	}
	set, err := triplet.ReadCSVWith(bytes.NewReader(in.CSV), opt)
	if err != nil {
		return fail(userErr(KindInvalid, "%v", err))
	}
	extra, err := readExtraColumns(in.CSV, cols, len(set.Triplets))
	if err != nil {
		return fail(err)
	}
	groups := set.Groups
	if groups == nil {
		groups = make([]string, len(set.Triplets))
	}

	st := Study{}
	rep := ImportReport{Items: set.N(), Answers: len(set.Triplets)}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		perP := map[string]int{}
		for _, g := range groups {
			perP[g]++
		}
		most := 1
		for _, c := range perP {
			most = max(most, c)
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
		itemRows := make([][]any, set.N())
		for i, id := range set.IDs {
			itemRows[i] = []any{st.ID, i, id, id, "", fmt.Sprintf("label-%d", i), 0, 0}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"items"},
			[]string{"study_id", "idx", "label", "file_name", "content_type", "sha256", "width", "height"},
			pgx.CopyFromRows(itemRows)); err != nil {
			return err
		}
		pids := map[string]int64{}
		now := time.Now().UTC()
		for i, g := range groups {
			if _, ok := pids[g]; ok {
				continue
			}
			created := now
			if extra.at[i] != nil {
				created = *extra.at[i]
			}
			var id int64
			if err := tx.QueryRow(ctx, `
				INSERT INTO participants (public_id, study_id, token_hash, external_id, created_at)
				VALUES ($1, $2, $3, nullif($4, ''), $5) RETURNING id`,
				newID(), st.ID, hashToken(newToken()), g, created).Scan(&id); err != nil {
				return err
			}
			pids[g] = id
		}
		rep.Participants = len(pids)
		ans := make([]importAnswer, len(set.Triplets))
		for i, t := range set.Triplets {
			at := now
			if extra.at[i] != nil {
				at = *extra.at[i]
			}
			ans[i] = importAnswer{qid: newID(), pid: pids[groups[i]], t: t,
				left: min(t.Closer, t.Farther), right: max(t.Closer, t.Farther),
				design: DesignImport, ms: extra.ms[i], asked: at, answered: at}
		}
		return copyAnswers(ctx, tx, st.ID, ans)
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
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

// importAnswer is one question with its answer, as imports write them.
type importAnswer struct {
	qid             string
	pid             int64
	t               triplet.Triplet
	left, right     int
	design          string
	ms              *int
	asked, answered time.Time
}

// copyAnswers writes questions, answers and their votes with COPY.
func copyAnswers(ctx context.Context, tx pgx.Tx, studyID int64, ans []importAnswer) error {
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"questions"},
		[]string{"id", "study_id", "participant_id", "anchor", "left_idx", "right_idx", "design", "issued_at", "answered_at"},
		pgx.CopyFromSlice(len(ans), func(i int) ([]any, error) {
			a := ans[i]
			return []any{a.qid, studyID, a.pid, a.t.Anchor, a.left, a.right, a.design, a.asked, a.answered}, nil
		})); err != nil {
		return fmt.Errorf("questions: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"answers"},
		[]string{"question_id", "study_id", "participant_id", "anchor", "closer", "farther", "response_ms", "answered_at"},
		pgx.CopyFromSlice(len(ans), func(i int) ([]any, error) {
			a := ans[i]
			return []any{a.qid, studyID, a.pid, a.t.Anchor, a.t.Closer, a.t.Farther, a.ms, a.answered}, nil
		})); err != nil {
		return fmt.Errorf("answers: %w", err)
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
		SELECT $1, anchor, least(closer, farther), greatest(closer, farther),
			count(*) FILTER (WHERE closer < farther), count(*) FILTER (WHERE closer > farther)
		FROM answers WHERE study_id = $1
		GROUP BY anchor, least(closer, farther), greatest(closer, farther)`, studyID)
	if err != nil {
		return fmt.Errorf("votes: %w", err)
	}
	return nil
}

// extraColumns are the optional per-row response times and times.
type extraColumns struct {
	ms []*int
	at []*time.Time
}

// readExtraColumns reads response_ms (or response_time_s) and answered_at
// (or asked_at) in the rows triplet.ReadCSVWith accepted (it skips blank
// lines only, and fails on any bad row), so row i here is triplet i.
func readExtraColumns(data []byte, cols map[string]int, n int) (extraColumns, error) {
	ex := extraColumns{ms: make([]*int, n), at: make([]*time.Time, n)}
	msCol, sCol, atCol := -1, -1, -1
	if c, ok := cols["response_ms"]; ok {
		msCol = c
	} else if c, ok := cols["response_time_s"]; ok {
		sCol = c
	}
	if c, ok := cols["answered_at"]; ok {
		atCol = c
	} else if c, ok := cols["asked_at"]; ok {
		atCol = c
	}
	if msCol < 0 && sCol < 0 && atCol < 0 {
		return ex, nil
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	if _, err := cr.Read(); err != nil {
		return ex, err
	}
	i := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ex, userErr(KindInvalid, "%v", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if i >= n {
			return ex, errors.New("the file changed between two reads")
		}
		line, _ := cr.FieldPos(0)
		field := func(c int) string {
			if c < 0 || c >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[c])
		}
		// Response times outside 0..MaxResponseMS (real logs have negative
		// ones from clock changes) are kept as unknown.
		if v := field(msCol); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil {
				return ex, userErr(KindInvalid, "line %d: response_ms %q is not a number of milliseconds", line, v)
			}
			if ms >= 0 && ms <= MaxResponseMS {
				ex.ms[i] = &ms
			}
		}
		if v := field(sCol); v != "" {
			sec, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(sec) {
				return ex, userErr(KindInvalid, "line %d: response_time_s %q is not a number of seconds", line, v)
			}
			if sec >= 0 && sec*1000 <= MaxResponseMS {
				ms := int(math.Round(sec * 1000))
				ex.ms[i] = &ms
			}
		}
		if v := field(atCol); v != "" {
			t, err := parseTime(v)
			if err != nil {
				return ex, userErr(KindInvalid, "line %d: %q is not a time (RFC 3339 or 2006-01-02 15:04:05)", line, v)
			}
			ex.at[i] = &t
		}
		i++
	}
	return ex, nil
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
