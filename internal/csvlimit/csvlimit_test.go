package csvlimit

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// readAll reads every record, returning how many and the error that ended it.
func readAll(r *Reader) (int, error) {
	n := 0
	for {
		_, err := r.Read()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	rows := "h\n" + strings.Repeat("a,b\n", 10)
	for _, c := range []struct {
		name string
		in   string
		lim  Limits
		read int
		err  string
	}{
		{"rows at the limit", rows, Limits{MaxRows: 10}, 11, ""},
		{"one row too many", rows, Limits{MaxRows: 9}, 10, "more than 9 rows (the limit)"},
		{"bytes at the limit", rows, Limits{MaxBytes: int64(len(rows))}, 11, ""},
		{"one byte too many", rows, Limits{MaxBytes: int64(len(rows)) - 1}, 10, "larger than 41 bytes (the limit)"},
		{"a long row", "h\nx\n" + strings.Repeat("y", 300<<10) + "\nz\n", Limits{MaxRecordBytes: 100 << 10}, 2, "a row (or a run of blank lines) longer than 100 KiB after line 2"},
		{"a long quoted row", "h\n\"" + strings.Repeat("a\n", 200<<10) + "\"\n", Limits{MaxRecordBytes: 100 << 10}, 1, "a row (or a run of blank lines) longer than 100 KiB after line 1"},
		{"rows of any length below the limit", "h\n" + strings.Repeat(strings.Repeat("y", 90<<10)+"\n", 20), Limits{MaxRecordBytes: 100 << 10}, 21, ""},
	} {
		n, err := readAll(NewReader(strings.NewReader(c.in), c.lim))
		var le *LimitError
		if n != c.read || (c.err == "") != (err == nil) || err != nil && (!errors.As(err, &le) || err.Error() != c.err) {
			t.Errorf("%s: read %d records, %v; want %d, %q", c.name, n, err, c.read, c.err)
		}
	}
}

func TestCSVErrorsPassThrough(t *testing.T) {
	t.Parallel()
	r := NewReader(strings.NewReader("a,b\n\"x,y\n"), Limits{})
	if _, err := r.Read(); err != nil {
		t.Fatalf("header: %v", err)
	}
	if _, err := r.Read(); err == nil || errors.As(err, new(*LimitError)) {
		t.Fatalf("want csv's parse error, got %v", err)
	}
	if r.Rows() != 0 || r.Line() != 1 {
		t.Fatalf("rows %d line %d", r.Rows(), r.Line())
	}
}
