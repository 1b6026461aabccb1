package triplet

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/csvsafe"
)

// Set is a triplet file read into memory: item ids as written in the file,
// and the triplets over their indices. IDs[i] is the id of item i.
type Set struct {
	IDs      []string
	Triplets []Triplet
	// Groups holds, when ReadOptions.GroupBy named a column, that column's
	// value for each triplet (same order as Triplets).
	Groups []string
}

// N returns the number of items.
func (s *Set) N() int { return len(s.IDs) }

// Index returns the index of the item with the given id, or -1.
func (s *Set) Index(id string) int {
	for i, v := range s.IDs {
		if v == id {
			return i
		}
	}
	return -1
}

// ReadOptions tunes ReadCSV.
type ReadOptions struct {
	// GroupBy names an extra column whose value is kept per triplet in
	// Set.Groups (for example "sampler", to hold out the Test rows).
	GroupBy string
	// MaxErrors caps how many bad rows are listed in a *CSVError (default 20).
	MaxErrors int
}

// RowError is one bad row of a triplet file.
type RowError struct {
	Line   int
	Reason string
}

func (e RowError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// CSVError lists the bad rows of a triplet file (at most MaxErrors of them)
// and how many there were in all.
type CSVError struct {
	Rows  []RowError
	Total int
}

func (e *CSVError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bad row(s)", e.Total)
	for _, r := range e.Rows {
		b.WriteString("; ")
		b.WriteString(r.Error())
	}
	if e.Total > len(e.Rows) {
		fmt.Fprintf(&b, "; and %d more", e.Total-len(e.Rows))
	}
	return b.String()
}

// ReadCSV reads triplets from a CSV file with a header naming the columns
// anchor,closer,farther (or the synonyms head,winner,loser), in any order;
// other columns are ignored. Item ids may be integers or any strings. When
// every id is an integer the items are indexed in numeric order, otherwise
// in string order, so the same file always gives the same indices.
// Bad rows (missing fields, empty ids, a repeated item) are all reported in
// a *CSVError with their line numbers. A single quote that closer put
// before a formula-like id (csvsafe.Cell) is removed.
func ReadCSV(r io.Reader) (*Set, error) { return ReadCSVWith(r, ReadOptions{}) }

// ReadCSVWith is ReadCSV with options.
func ReadCSVWith(r io.Reader, opt ReadOptions) (*Set, error) {
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = 20
	}
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
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
	idx := [3]int{-1, -1, -1}
	for i, names := range [3][2]string{{"anchor", "head"}, {"closer", "winner"}, {"farther", "loser"}} {
		if c, ok := col[names[0]]; ok {
			idx[i] = c
		} else if c, ok := col[names[1]]; ok {
			idx[i] = c
		}
	}
	if idx[0] < 0 || idx[1] < 0 || idx[2] < 0 {
		return nil, fmt.Errorf("header %q: expected columns anchor,closer,farther (or head,winner,loser)", strings.Join(header, ","))
	}
	group := -1
	if opt.GroupBy != "" {
		c, ok := col[strings.ToLower(opt.GroupBy)]
		if !ok {
			return nil, fmt.Errorf("header %q has no column %q", strings.Join(header, ","), opt.GroupBy)
		}
		group = c
	}
	need := max(idx[0], idx[1], idx[2], group) + 1

	type rawRow [3]int32 // indices into names
	names := map[string]int32{}
	var nameList []string
	intern := func(s string) int32 {
		if v, ok := names[s]; ok {
			return v
		}
		v := int32(len(nameList))
		names[s] = v
		nameList = append(nameList, s)
		return v
	}
	var rows []rawRow
	var groups []string
	bad := &CSVError{}
	report := func(line int, reason string) {
		bad.Total++
		if len(bad.Rows) < opt.MaxErrors {
			bad.Rows = append(bad.Rows, RowError{line, reason})
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				report(pe.Line, pe.Err.Error())
				if pe.Err == csv.ErrQuote || pe.Err == csv.ErrBareQuote {
					continue
				}
				continue
			}
			return nil, fmt.Errorf("reading triplets: %w", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		if len(rec) < need {
			report(line, fmt.Sprintf("%d field(s), expected at least %d", len(rec), need))
			continue
		}
		a, b, c := readID(rec[idx[0]]), readID(rec[idx[1]]), readID(rec[idx[2]])
		if a == "" || b == "" || c == "" {
			report(line, "empty item id")
			continue
		}
		if a == b || a == c || b == c {
			report(line, fmt.Sprintf("repeated item in (%s, %s, %s)", a, b, c))
			continue
		}
		rows = append(rows, rawRow{intern(a), intern(b), intern(c)})
		if group >= 0 {
			groups = append(groups, csvsafe.Unescape(rec[group]))
		}
	}
	if bad.Total > 0 {
		return nil, bad
	}
	if len(rows) == 0 {
		return nil, errors.New("no triplets after the header")
	}
	order := make([]int32, len(nameList))
	for i := range order {
		order[i] = int32(i)
	}
	allInts := true
	ints := make([]int64, len(nameList))
	for i, s := range nameList {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			allInts = false
			break
		}
		ints[i] = v
	}
	if allInts {
		slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(ints[x], ints[y]) })
	} else {
		slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(nameList[x], nameList[y]) })
	}
	index := make([]int, len(nameList))
	s := &Set{IDs: make([]string, len(nameList)), Triplets: make([]Triplet, len(rows)), Groups: groups}
	for pos, name := range order {
		index[name] = pos
		s.IDs[pos] = nameList[name]
	}
	for i, r := range rows {
		s.Triplets[i] = Triplet{index[r[0]], index[r[1]], index[r[2]]}
	}
	return s, nil
}

// readID is an item id as written in a triplet file.
func readID(s string) string { return csvsafe.Unescape(strings.TrimSpace(s)) }

// WriteCSV writes triplets with the header anchor,closer,farther, naming
// items by ids[i] (or by their index when ids is nil); formula-like ids get
// a leading single quote (csvsafe.Cell).
func WriteCSV(w io.Writer, ids []string, ts []Triplet) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	name := func(i int) string {
		if ids == nil {
			return strconv.Itoa(i)
		}
		return ids[i]
	}
	cw := csvsafe.NewWriter(bw)
	if err := cw.Write([]string{"anchor", "closer", "farther"}); err != nil {
		return fmt.Errorf("write triplets: %w", err)
	}
	rec := make([]string, 3)
	for _, t := range ts {
		rec[0], rec[1], rec[2] = name(t.Anchor), name(t.Closer), name(t.Farther)
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write triplets: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write triplets: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write triplets: %w", err)
	}
	return nil
}
