package studyfile

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

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// DesignImport is the design recorded on imported questions.
const DesignImport = "import"

// TripletsInput is a triplet CSV to import as a new study.
type TripletsInput struct {
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

// ImportTriplets creates a draft study in store whose items are the file's
// item ids (labels without images, numbered as triplet.ReadCSV numbers
// them: numeric ids in numeric order) and whose answers are the file's
// rows, one participant per value of the participant column (one
// participant when there is none). Everything is created in one
// transaction (store.Store.ImportStudy), the answers as the file is read.
// Such a study can be recomputed and exported but not opened to
// annotators.
func ImportTriplets(ctx context.Context, db Store, in TripletsInput) (study.Study, Report, error) {
	fail := func(err error) (study.Study, Report, error) {
		return study.Study{}, Report{}, fmt.Errorf("import triplets: %w", err)
	}
	sc, err := scanTriplets(in.CSV)
	if err != nil {
		return fail(err)
	}
	st := study.Study{}
	rep := Report{Items: len(sc.ids), Participants: len(sc.groups)}
	err = db.ImportStudy(ctx, func(imp study.ImportWriter) error {
		most := 1
		for _, g := range sc.groups {
			most = max(most, g.rows)
		}
		st, err = imp.CreateStudy(study.StudyInput{Slug: in.Slug, Title: in.Title, QuestionsPerParticipant: min(most, 100000),
			Status: study.StatusDraft, Design: study.DesignRandom,
			Instructions: "Imported from a triplet file: items have labels and no images."})
		if err != nil {
			return err
		}
		if _, err := imp.CopyItems(&sliceRows[study.ImportItem]{n: len(sc.ids), row: func(i int) study.ImportItem {
			return study.ImportItem{Index: i, Label: sc.ids[i], FileName: sc.ids[i], SHA256: fmt.Sprintf("label-%d", i)}
		}}); err != nil {
			return err
		}
		if _, err := imp.CopyParticipants(&sliceRows[study.ImportParticipant]{n: len(sc.groups), row: func(i int) study.ImportParticipant {
			g := sc.groups[i]
			created := sc.now
			if g.created != nil {
				created = *g.created
			}
			return study.ImportParticipant{Key: g.key, ExternalID: g.key, CreatedAt: created}
		}}); err != nil {
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
		rep.Answers, err = imp.CopyAnswers(answerRows{rows})
		if err == nil && rep.Answers != sc.triplets {
			return errors.New("the file changed between two reads")
		}
		return answersErr("the file", err)
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
					return nil, invalid("line %d: more than %d distinct items (the limit)", a.line, MaxImportItems)
				}
				id = strings.Clone(id)
				sc.index[id] = len(sc.ids)
				sc.ids = append(sc.ids, id)
			}
		}
		gi, ok := sc.group[a.group]
		if !ok {
			if len(sc.groups) == MaxImportParticipants {
				return nil, invalid("line %d: more than %d participants (the limit)", a.line, MaxImportParticipants)
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
		return nil, invalid("no triplets after the header")
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
		return nil, invalid("%v", err)
	}
	if rs.Column("participant") >= 0 {
		if err := rs.GroupBy("participant"); err != nil {
			return nil, invalid("%v", err)
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
		tr.err = invalid("line %d: "+format, append([]any{row.Line}, args...)...)
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
	// Response times outside 0..study.MaxResponseMS (real logs have negative
	// ones from clock changes) are kept as unknown.
	if v := field(tr.msCol); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return fail("response_ms %q is not a number of milliseconds", v)
		}
		if ms >= 0 && ms <= study.MaxResponseMS {
			a.ms = &ms
		}
	}
	if v := field(tr.sCol); v != "" {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(sec) {
			return fail("response_time_s %q is not a number of seconds", v)
		}
		if sec >= 0 && sec*1000 <= study.MaxResponseMS {
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
		return invalid("%v", err)
	}
	return nil
}

// answerRows are the rows of the second pass as the store's answers (each
// row is its own question, of design DesignImport, asked when answered).
type answerRows struct{ *tripletRows }

func (r answerRows) Value() study.ImportAnswer {
	a := r.cur
	return study.ImportAnswer{Line: a.line, Participant: a.group, Anchor: a.t.Anchor,
		Left: min(a.t.Closer, a.t.Farther), Right: max(a.t.Closer, a.t.Farther), Closer: a.t.Closer, Farther: a.t.Farther,
		Design: DesignImport, ResponseMS: a.ms, AskedAt: *a.at, AnsweredAt: *a.at}
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
