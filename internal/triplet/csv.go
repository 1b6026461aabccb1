package triplet

import (
	"bufio"
	"cmp"
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
	// MaxRows bounds the records after the header, bad ones included
	// (0: no limit); a longer file gives a *csvlimit.LimitError.
	MaxRows int
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

// ReadCSVWith is ReadCSV with options. It reads the file as a stream
// (Rows); the Set it builds takes memory in proportion to the triplets.
func ReadCSVWith(r io.Reader, opt ReadOptions) (*Set, error) {
	rs, err := NewRows(r, opt)
	if err != nil {
		return nil, err
	}
	type rawRow [3]int32 // indices into names
	names := map[string]int32{}
	var nameList []string
	intern := func(s string) int32 {
		if v, ok := names[s]; ok {
			return v
		}
		s = strings.Clone(s) // not the whole line's memory
		v := int32(len(nameList))
		names[s] = v
		nameList = append(nameList, s)
		return v
	}
	var rows []rawRow
	var groups []string
	for rs.Next() {
		row := rs.Row()
		rows = append(rows, rawRow{intern(row.Anchor), intern(row.Closer), intern(row.Farther)})
		if rs.group >= 0 {
			groups = append(groups, strings.Clone(row.Group))
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no triplets after the header")
	}
	order := make([]int32, len(nameList))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, idOrder(nameList))
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

// idOrder compares positions in ids the way ReadCSV numbers items: in
// numeric order when every id is an integer, else in string order.
func idOrder(ids []string) func(x, y int32) int {
	ints := make([]int64, len(ids))
	for i, s := range ids {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return func(x, y int32) int { return cmp.Compare(ids[x], ids[y]) }
		}
		ints[i] = v
	}
	return func(x, y int32) int { return cmp.Compare(ints[x], ints[y]) }
}

// SortIDs sorts item ids into the order ReadCSV numbers them (numeric when
// every id is an integer, else string order; ties keep their order).
func SortIDs(ids []string) {
	order := make([]int32, len(ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, idOrder(ids))
	sorted := make([]string, len(ids))
	for i, o := range order {
		sorted[i] = ids[o]
	}
	copy(ids, sorted)
}

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
