package triplet

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/csvsafe"
)

// Row is one good row of a triplet file: item ids as written (trimmed).
type Row struct {
	Line                    int
	Anchor, Closer, Farther string
	// Group is the ReadOptions.GroupBy column's value ("" without one).
	Group string
	// Record is the whole record; it is reused by the next call to Next.
	Record []string
}

// Rows reads a triplet file one row at a time, with the header and row
// checks of ReadCSVWith and memory that does not grow with the file: bad
// rows are skipped and listed (at most ReadOptions.MaxErrors) in the
// *CSVError that Err returns at the end. The strings of a Row share memory
// with its line: clone those that are kept.
type Rows struct {
	r     *csvlimit.Reader
	cols  map[string]int
	idx   [3]int
	group int
	need  int
	opt   ReadOptions
	bad   CSVError
	row   Row
	err   error
}

// NewRows reads the header of a triplet file and returns its rows.
func NewRows(r io.Reader, opt ReadOptions) (*Rows, error) {
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = 20
	}
	cr := csvlimit.NewReader(r, csvlimit.Limits{MaxRows: opt.MaxRows})
	cr.CSV().TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file: expected a header anchor,closer,farther")
	}
	if err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	rs := &Rows{r: cr, cols: col, idx: [3]int{-1, -1, -1}, group: -1, opt: opt}
	for i, names := range [3][2]string{{"anchor", "head"}, {"closer", "winner"}, {"farther", "loser"}} {
		if c, ok := col[names[0]]; ok {
			rs.idx[i] = c
		} else if c, ok := col[names[1]]; ok {
			rs.idx[i] = c
		}
	}
	if rs.idx[0] < 0 || rs.idx[1] < 0 || rs.idx[2] < 0 {
		return nil, fmt.Errorf("header %q: expected columns anchor,closer,farther (or head,winner,loser)", strings.Join(header, ","))
	}
	rs.need = max(rs.idx[0], rs.idx[1], rs.idx[2]) + 1
	if opt.GroupBy != "" {
		if _, ok := col[strings.ToLower(opt.GroupBy)]; !ok {
			return nil, fmt.Errorf("header %q has no column %q", strings.Join(header, ","), opt.GroupBy)
		}
		if err := rs.GroupBy(opt.GroupBy); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// GroupBy sets the column whose value each Row carries as Group, as
// ReadOptions.GroupBy does; call it before the first Next.
func (rs *Rows) GroupBy(name string) error {
	c := rs.Column(name)
	if c < 0 {
		return fmt.Errorf("the header has no column %q", name)
	}
	rs.group = c
	rs.need = max(rs.idx[0], rs.idx[1], rs.idx[2], rs.group) + 1
	return nil
}

// Column returns the index of a header column (case and spaces ignored), or -1.
func (rs *Rows) Column(name string) int {
	if c, ok := rs.cols[strings.ToLower(name)]; ok {
		return c
	}
	return -1
}

// Next advances to the next good row; it returns false at the end of the
// file or on an error that stops the reading (see Err).
func (rs *Rows) Next() bool {
	if rs.err != nil {
		return false
	}
	for {
		rec, err := rs.r.Read()
		if err == io.EOF {
			return false
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				rs.report(pe.Line, pe.Err.Error())
				continue
			}
			var le *csvlimit.LimitError
			if errors.As(err, &le) {
				rs.err = le
			} else {
				rs.err = fmt.Errorf("reading triplets: %w", err)
			}
			return false
		}
		line := rs.r.Line()
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		if len(rec) < rs.need {
			rs.report(line, fmt.Sprintf("%d field(s), expected at least %d", len(rec), rs.need))
			continue
		}
		a, b, c := readID(rec[rs.idx[0]]), readID(rec[rs.idx[1]]), readID(rec[rs.idx[2]])
		if a == "" || b == "" || c == "" {
			rs.report(line, "empty item id")
			continue
		}
		if a == b || a == c || b == c {
			rs.report(line, fmt.Sprintf("repeated item in (%s, %s, %s)", a, b, c))
			continue
		}
		rs.row = Row{Line: line, Anchor: a, Closer: b, Farther: c, Record: rec}
		if rs.group >= 0 {
			rs.row.Group = csvsafe.Unescape(rec[rs.group])
		}
		return true
	}
}

// readID is an item id as written in a triplet file: trimmed, and without
// the quote closer puts before a formula-like id (csvsafe.Cell). Behind
// that quote an id keeps white space at its start (" =2" is written
// "' =2"), so that it reads back as it was written.
func readID(s string) string { return csvsafe.Unescape(strings.TrimSpace(s)) }

func (rs *Rows) report(line int, reason string) {
	rs.bad.Total++
	if len(rs.bad.Rows) < rs.opt.MaxErrors {
		rs.bad.Rows = append(rs.bad.Rows, RowError{line, reason})
	}
}

// Row is the current row.
func (rs *Rows) Row() Row { return rs.row }

// Err is the error that stopped the reading (a read error or a
// *csvlimit.LimitError), else the *CSVError of the bad rows, else nil.
func (rs *Rows) Err() error {
	if rs.err != nil {
		return rs.err
	}
	if rs.bad.Total > 0 {
		bad := rs.bad
		return &bad
	}
	return nil
}
