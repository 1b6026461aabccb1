// Package csvlimit reads CSV as a stream with limits: records after the
// header, bytes per record and bytes in all. encoding/csv alone keeps a
// whole record in memory however long it is, and csv.ReadAll keeps the
// whole file; with these limits the memory a reader takes is bounded
// whatever the input, and a refused file says which limit it broke.
package csvlimit

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/closer-lab/closer/internal/format"
)

// Limits bound one CSV read. Zero values take the defaults.
type Limits struct {
	MaxRows        int   // records after the header (0: no limit)
	MaxRecordBytes int   // bytes of one record (0: 1 MiB)
	MaxBytes       int64 // bytes of the whole file (0: no limit)
}

// DefaultMaxRecordBytes bounds a record when Limits.MaxRecordBytes is 0.
const DefaultMaxRecordBytes = 1 << 20

// readAhead is how far the buffer under the CSV reader reads past the
// record being parsed.
const readAhead = 64 << 10

// LimitError says which limit a file broke.
type LimitError struct {
	What  string // "rows", "record" or "bytes"
	Limit int64
	Line  int // the last line read whole before the limit
}

func (e *LimitError) Error() string {
	switch e.What {
	case "rows":
		return fmt.Sprintf("more than %s rows (the limit)", format.Thousands(e.Limit))
	case "record":
		// encoding/csv skips blank lines inside a Read, so a long run of
		// them counts as one long row.
		return fmt.Sprintf("a row (or a run of blank lines) longer than %s after line %d", bytesText(e.Limit), e.Line)
	default:
		return fmt.Sprintf("larger than %s (the limit)", bytesText(e.Limit))
	}
}

// Reader reads records one at a time. Its records are reused between
// calls (csv.Reader.ReuseRecord): copy what must outlive the next Read.
type Reader struct {
	cr   *csv.Reader
	src  *countingReader
	lim  Limits
	rows int // records read, the header included
	line int
}

// NewReader returns a Reader of r. Set csv options (TrimLeadingSpace,
// FieldsPerRecord, ...) through CSV before the first Read; FieldsPerRecord
// is -1 (any number of fields) unless changed.
func NewReader(r io.Reader, lim Limits) *Reader {
	if lim.MaxRecordBytes <= 0 {
		lim.MaxRecordBytes = DefaultMaxRecordBytes
	}
	src := &countingReader{r: r, lim: lim}
	cr := csv.NewReader(bufio.NewReaderSize(src, readAhead))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &Reader{cr: cr, src: src, lim: lim}
}

// CSV is the underlying csv.Reader, to set its options.
func (r *Reader) CSV() *csv.Reader { return r.cr }

// Line is the line where the last record read started.
func (r *Reader) Line() int { return r.line }

// Rows is the number of records read after the header.
func (r *Reader) Rows() int { return max(r.rows-1, 0) }

// Read returns the next record, io.EOF at the end, a *LimitError when a
// limit is reached, or csv's *ParseError.
func (r *Reader) Read() ([]string, error) {
	r.src.recordStart = r.cr.InputOffset()
	rec, err := r.cr.Read()
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			le.Line = r.line
			return nil, le
		}
		return nil, err
	}
	r.rows++
	r.line, _ = r.cr.FieldPos(0)
	if r.lim.MaxRows > 0 && r.rows-1 > r.lim.MaxRows {
		return nil, &LimitError{What: "rows", Limit: int64(r.lim.MaxRows), Line: r.line}
	}
	return rec, nil
}

// countingReader fails once the file or the record being read is too long.
type countingReader struct {
	r           io.Reader
	lim         Limits
	n           int64 // bytes read
	recordStart int64 // where the record being parsed started
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.lim.MaxBytes > 0 && c.n >= c.lim.MaxBytes {
		// One byte more tells a file of exactly MaxBytes from a longer one.
		var b [1]byte
		if k, _ := io.ReadFull(c.r, b[:]); k > 0 {
			return 0, &LimitError{What: "bytes", Limit: c.lim.MaxBytes}
		}
		return 0, io.EOF
	}
	if c.n-c.recordStart > int64(c.lim.MaxRecordBytes)+readAhead {
		return 0, &LimitError{What: "record", Limit: int64(c.lim.MaxRecordBytes)}
	}
	if c.lim.MaxBytes > 0 && int64(len(p)) > c.lim.MaxBytes-c.n {
		p = p[:c.lim.MaxBytes-c.n]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return format.Thousands(n) + " bytes"
}
