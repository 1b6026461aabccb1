package studyfile_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
)

// repeatReader is a header followed by rows made on the fly, so a test can
// import millions of rows without holding them.
type repeatReader struct {
	header string
	row    func(i int) string
	n      int
	buf    bytes.Buffer
	i      int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for r.buf.Len() < len(p) && r.i <= r.n {
		if r.i == 0 {
			r.buf.WriteString(r.header)
		} else {
			r.buf.WriteString(r.row(r.i))
		}
		r.i++
	}
	if r.buf.Len() == 0 {
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

func (r *repeatReader) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, fmt.Errorf("only a rewind")
	}
	r.buf.Reset()
	r.i = 0
	return 0, nil
}

func TestImportTripletsRefuses(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		csv    io.ReadSeeker
		reason string
	}{
		{"bad row", strings.NewReader("anchor,closer,farther\n1,2,3\n1,1,3\n"), "1 bad row(s); line 3: repeated item in (1, 1, 3)"},
		{"nul", strings.NewReader("anchor,closer,farther\n1,2,3\na\x00b,2,3\n"), "line 3: anchor holds a NUL byte or invalid UTF-8"},
		{"long id", strings.NewReader("anchor,closer,farther\n1,2," + strings.Repeat("x", 201) + "\n"), "line 2: farther is longer than 200 bytes"},
		{"bad time", strings.NewReader("anchor,closer,farther,answered_at\n1,2,3,yesterday\n"), `line 2: "yesterday" is not a time`},
		{"empty", strings.NewReader("anchor,closer,farther\n"), "no triplets after the header"},
		{"items", &repeatReader{header: "anchor,closer,farther\n", n: studyfile.MaxImportItems/3 + 1,
			row: func(i int) string { return fmt.Sprintf("a%d,b%d,c%d\n", i, i, i) }},
			fmt.Sprintf("more than %d distinct items (the limit)", studyfile.MaxImportItems)},
		{"participants", &repeatReader{header: "anchor,closer,farther,participant\n", n: studyfile.MaxImportParticipants + 1,
			row: func(i int) string { return fmt.Sprintf("1,2,3,w%d\n", i) }},
			fmt.Sprintf("line %d: more than %d participants (the limit)", studyfile.MaxImportParticipants+2, studyfile.MaxImportParticipants)},
		{"rows", &repeatReader{header: "anchor,closer,farther\n", n: studyfile.MaxImportTriplets + 1,
			row: func(int) string { return "1,2,3\n" }}, "more than 5,000,000 rows (the limit)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := studyfile.ImportTriplets(ctx, s, studyfile.TripletsInput{Slug: "imp", Title: "Imported", CSV: c.csv})
			if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("got %v, want %q", err, c.reason)
			}
		})
	}
	if n := countRows(t, pool, `SELECT count(*) FROM studies`); n != 0 {
		t.Fatalf("refused imports stored %d studies", n)
	}
	// Rows made on the fly import as a stream.
	st, rep, err := studyfile.ImportTriplets(ctx, s, studyfile.TripletsInput{Slug: "imp", Title: "Imported", CSV: &repeatReader{
		header: "anchor,closer,farther,participant,response_ms\n", n: 30000,
		row: func(i int) string { return fmt.Sprintf("%d,%d,%d,w%d,%d\n", i%7, (i+1)%7, (i+3)%7, i%11, 500+i) }}})
	if err != nil {
		t.Fatal(err)
	}
	if rep != (studyfile.Report{Items: 7, Participants: 11, Answers: 30000}) {
		t.Fatalf("report %+v", rep)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND a.response_ms >= 500 AND q.left_idx < q.right_idx`, st.ID); n != 30000 {
		t.Fatalf("%d answers stored", n)
	}
}

func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
