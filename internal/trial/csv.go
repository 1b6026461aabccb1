package trial

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/triplet"
)

// Kind is the format of a trial file: the study format and, for rank
// files, the size the header gives.
type Kind struct {
	Format Format
	Rank   RankSpec // set when Format is FormatRank
}

// String is the kind as flags spell it: "triplet", "odd-one-out" or
// "rank:N:K".
func (k Kind) String() string {
	if k.Format == FormatRank {
		return k.Rank.String()
	}
	return string(k.Format)
}

// ParseKind parses a format as flags spell it: "triplet", "odd-one-out" or
// "rank:N:K".
func ParseKind(s string) (Kind, error) {
	switch Format(s) {
	case FormatTriplet, FormatOddOneOut:
		return Kind{Format: Format(s)}, nil
	}
	if strings.HasPrefix(s, string(FormatRank)) {
		spec, err := ParseRankSpec(s)
		if err != nil {
			return Kind{}, err
		}
		return Kind{Format: FormatRank, Rank: spec}, nil
	}
	return Kind{}, fmt.Errorf("unknown format %q (want triplet, odd-one-out or rank:N:K)", s)
}

// ReadOptions tunes the readers.
type ReadOptions struct {
	// MaxErrors caps how many bad rows are listed in the
	// *triplet.CSVError (default 20).
	MaxErrors int
	// MaxRows bounds the records after the header, bad ones included
	// (0: no limit); a longer file gives a *csvlimit.LimitError.
	MaxRows int
}

// header is a trial file's header: each column name, lower case and
// trimmed, at its position (the first of repeated names).
type header struct {
	raw []string
	col map[string]int
}

func readHeader(cr *csvlimit.Reader, want string) (header, error) {
	rec, err := cr.Read()
	if err == io.EOF {
		return header{}, fmt.Errorf("empty file: expected a header %s", want)
	}
	if err != nil {
		return header{}, fmt.Errorf("reading header: %w", err)
	}
	h := header{raw: append([]string(nil), rec...), col: map[string]int{}}
	for i, name := range rec {
		name = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))
		if _, dup := h.col[name]; !dup {
			h.col[name] = i
		}
	}
	return h, nil
}

// numbered returns the columns prefix1, prefix2, ... up to the first
// missing number.
func (h header) numbered(prefix string) []int {
	var cols []int
	for k := 1; ; k++ {
		c, ok := h.col[prefix+strconv.Itoa(k)]
		if !ok {
			return cols
		}
		cols = append(cols, c)
	}
}

// detect returns the kind of file the header names.
func (h header) detect() (Kind, error) {
	_, a := h.col["anchor"]
	_, hd := h.col["head"]
	if a || hd {
		return Kind{Format: FormatTriplet}, nil
	}
	if _, ok := h.col["odd"]; ok {
		return Kind{Format: FormatOddOneOut}, nil
	}
	if _, ok := h.col["query"]; ok {
		spec := RankSpec{N: len(h.numbered("option")), K: len(h.numbered("choice"))}
		if err := spec.Validate(); err != nil {
			return Kind{}, fmt.Errorf("header %q: %w", strings.Join(h.raw, ","), err)
		}
		return Kind{Format: FormatRank, Rank: spec}, nil
	}
	return Kind{}, fmt.Errorf("header %q: not a trial file (want anchor,closer,farther; item1,item2,item3,odd; or query,option1,…,optionN,choice1,…,choiceK)", strings.Join(h.raw, ","))
}

// Sniff reads the header of a trial file and returns its kind, and a
// reader that replays the whole file (header included) for the reader of
// that kind. The header must fit in 64 KiB.
func Sniff(r io.Reader) (Kind, io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Kind{}, nil, fmt.Errorf("reading header: %w", err)
	}
	if i := strings.IndexByte(string(head), '\n'); i >= 0 {
		head = head[:i+1]
	}
	cr := csvlimit.NewReader(strings.NewReader(string(head)), csvlimit.Limits{})
	h, err := readHeader(cr, "naming the format's columns")
	if err != nil {
		return Kind{}, nil, err
	}
	k, err := h.detect()
	return k, br, err
}

// rowReader is the shared row loop of the readers: bounded records,
// bad rows listed with their line numbers.
type rowReader struct {
	cr  *csvlimit.Reader
	opt ReadOptions
	bad triplet.CSVError
	err error

	names map[string]int32
	list  []string
}

func newRowReader(r io.Reader, opt ReadOptions) *rowReader {
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = 20
	}
	cr := csvlimit.NewReader(r, csvlimit.Limits{MaxRows: opt.MaxRows})
	cr.CSV().TrimLeadingSpace = true
	return &rowReader{cr: cr, opt: opt, names: map[string]int32{}}
}

func (rr *rowReader) report(line int, reason string) {
	rr.bad.Total++
	if len(rr.bad.Rows) < rr.opt.MaxErrors {
		rr.bad.Rows = append(rr.bad.Rows, triplet.RowError{Line: line, Reason: reason})
	}
}

// next returns the next non-blank record with at least need fields, or
// nil at the end or on a stopping error (rr.err).
func (rr *rowReader) next(need int) []string {
	for rr.err == nil {
		rec, err := rr.cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				rr.report(pe.Line, pe.Err.Error())
				continue
			}
			var le *csvlimit.LimitError
			if errors.As(err, &le) {
				rr.err = le
			} else {
				rr.err = fmt.Errorf("reading trials: %w", err)
			}
			return nil
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) < need {
			rr.report(rr.cr.Line(), fmt.Sprintf("%d field(s), expected at least %d", len(rec), need))
			continue
		}
		return rec
	}
	return nil
}

func (rr *rowReader) intern(s string) int32 {
	if v, ok := rr.names[s]; ok {
		return v
	}
	s = strings.Clone(s)
	v := int32(len(rr.list))
	rr.names[s] = v
	rr.list = append(rr.list, s)
	return v
}

// finish returns the stopping error or the bad rows, and otherwise the
// ids in ReadCSV's order (numeric when every id is an integer, else string
// order) with the map from interned name to item index.
func (rr *rowReader) finish(rows int) ([]string, []int, error) {
	if rr.err != nil {
		return nil, nil, rr.err
	}
	if rr.bad.Total > 0 {
		bad := rr.bad
		return nil, nil, &bad
	}
	if rows == 0 {
		return nil, nil, errors.New("no trials after the header")
	}
	ids := append([]string(nil), rr.list...)
	triplet.SortIDs(ids)
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	index := make([]int, len(rr.list))
	for name, s := range rr.list {
		index[name] = pos[s]
	}
	return ids, index, nil
}

// readID is an id as written: trimmed, without csvsafe's formula quote.
func readID(s string) string { return csvsafe.Unescape(strings.TrimSpace(s)) }

// OddSet is an odd-one-out file read into memory: the item ids (IDs[i] is
// item i's) and the trials over their indices.
type OddSet struct {
	IDs    []string
	Trials []OddOneOut
}

// OddHeader is the odd-one-out file's header.
var OddHeader = []string{"item1", "item2", "item3", "odd"}

// ReadOddOneOut reads odd-one-out trials from a CSV file with the header
// item1,item2,item3,odd in any order (other columns ignored): the three
// items in display order and the id of the one chosen as odd one out.
// Items are numbered as triplet.ReadCSV numbers them. Bad rows (missing
// fields, an empty id, a repeated item, an odd one not shown) are listed
// with their line numbers in a *triplet.CSVError; more than MaxRows
// records give a *csvlimit.LimitError. Memory grows with the trials, not
// with a row's length beyond csvlimit's bound.
func ReadOddOneOut(r io.Reader, opt ReadOptions) (*OddSet, error) {
	rr := newRowReader(r, opt)
	h, err := readHeader(rr.cr, strings.Join(OddHeader, ","))
	if err != nil {
		return nil, err
	}
	var idx [4]int
	for k, name := range OddHeader {
		c, ok := h.col[name]
		if !ok {
			return nil, fmt.Errorf("header %q: expected columns %s", strings.Join(h.raw, ","), strings.Join(OddHeader, ","))
		}
		idx[k] = c
	}
	need := max(idx[0], idx[1], idx[2], idx[3]) + 1
	var rows [][4]int32
	for rec := rr.next(need); rec != nil; rec = rr.next(need) {
		line := rr.cr.Line()
		var v [4]string
		for k := range v {
			v[k] = readID(rec[idx[k]])
		}
		switch {
		case v[0] == "" || v[1] == "" || v[2] == "" || v[3] == "":
			rr.report(line, "empty item id")
			continue
		case v[0] == v[1] || v[0] == v[2] || v[1] == v[2]:
			rr.report(line, fmt.Sprintf("repeated item in (%s, %s, %s)", v[0], v[1], v[2]))
			continue
		case v[3] != v[0] && v[3] != v[1] && v[3] != v[2]:
			rr.report(line, fmt.Sprintf("odd %s is not one of the items shown (%s, %s, %s)", v[3], v[0], v[1], v[2]))
			continue
		}
		a, b, c := rr.intern(v[0]), rr.intern(v[1]), rr.intern(v[2])
		odd := a
		if v[3] == v[1] {
			odd = b
		} else if v[3] == v[2] {
			odd = c
		}
		rows = append(rows, [4]int32{a, b, c, odd})
	}
	ids, index, err := rr.finish(len(rows))
	if err != nil {
		return nil, err
	}
	s := &OddSet{IDs: ids, Trials: make([]OddOneOut, len(rows))}
	for k, r := range rows {
		s.Trials[k] = OddOneOut{Items: [3]int{index[r[0]], index[r[1]], index[r[2]]}, Odd: index[r[3]]}
	}
	return s, nil
}

// RankSet is a rank file read into memory: the item ids, the trial size
// its header gives, and the trials over the items' indices.
type RankSet struct {
	IDs    []string
	Spec   RankSpec
	Trials []Rank
}

// RankHeader is the rank file's header for spec:
// query,option1,…,optionN,choice1,…,choiceK.
func RankHeader(spec RankSpec) []string {
	h := []string{"query"}
	for k := 1; k <= spec.N; k++ {
		h = append(h, "option"+strconv.Itoa(k))
	}
	for k := 1; k <= spec.K; k++ {
		h = append(h, "choice"+strconv.Itoa(k))
	}
	return h
}

// ReadRank reads rank trials from a CSV file with the header
// query,option1,…,optionN,choice1,…,choiceK (any order, other columns
// ignored; N and K are the numbered columns present, 2 ≤ K < N ≤ 9): the
// query, the references in display order and the ids chosen, most similar
// first. Items are numbered as triplet.ReadCSV numbers them. Bad rows (a
// missing field, an empty id, an item shown twice, a choice not shown or
// chosen twice, too few choices) are listed with their line numbers in a
// *triplet.CSVError; more than MaxRows records give a
// *csvlimit.LimitError.
func ReadRank(r io.Reader, opt ReadOptions) (*RankSet, error) {
	rr := newRowReader(r, opt)
	h, err := readHeader(rr.cr, "query,option1,…,optionN,choice1,…,choiceK")
	if err != nil {
		return nil, err
	}
	q, ok := h.col["query"]
	if !ok {
		return nil, fmt.Errorf("header %q: expected a column query", strings.Join(h.raw, ","))
	}
	optCols, choiceCols := h.numbered("option"), h.numbered("choice")
	spec := RankSpec{N: len(optCols), K: len(choiceCols)}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("header %q: %w", strings.Join(h.raw, ","), err)
	}
	need := q + 1
	for _, c := range append(append([]int(nil), optCols...), choiceCols...) {
		need = max(need, c+1)
	}
	stride := 1 + spec.N + spec.K
	var flat []int32 // query, options, choices as interned names
	opts := make([]string, spec.N)
	choices := make([]string, spec.K)
	rows := 0
	for rec := rr.next(need); rec != nil; rec = rr.next(need) {
		line := rr.cr.Line()
		query := readID(rec[q])
		for k, c := range optCols {
			opts[k] = readID(rec[c])
		}
		for k, c := range choiceCols {
			choices[k] = readID(rec[c])
		}
		if reason := checkRankRow(query, opts, choices); reason != "" {
			rr.report(line, reason)
			continue
		}
		flat = append(flat, rr.intern(query))
		for _, o := range opts {
			flat = append(flat, rr.intern(o))
		}
		for _, c := range choices {
			flat = append(flat, rr.intern(c))
		}
		rows++
	}
	ids, index, err := rr.finish(rows)
	if err != nil {
		return nil, err
	}
	s := &RankSet{IDs: ids, Spec: spec, Trials: make([]Rank, rows)}
	all := make([]int, rows*(spec.N+spec.K))
	for k := range rows {
		row := flat[k*stride : (k+1)*stride]
		o := all[k*(spec.N+spec.K) : k*(spec.N+spec.K)+spec.N : k*(spec.N+spec.K)+spec.N]
		c := all[k*(spec.N+spec.K)+spec.N : (k+1)*(spec.N+spec.K) : (k+1)*(spec.N+spec.K)]
		for i := range o {
			o[i] = index[row[1+i]]
		}
		for i := range c {
			c[i] = index[row[1+spec.N+i]]
		}
		s.Trials[k] = Rank{Query: index[row[0]], Options: o, Choices: c}
	}
	return s, nil
}

// checkRankRow returns why a rank row is bad, or "".
func checkRankRow(query string, opts, choices []string) string {
	if query == "" {
		return "empty query id"
	}
	for k, o := range opts {
		if o == "" {
			return fmt.Sprintf("empty option%d", k+1)
		}
		if o == query {
			return fmt.Sprintf("the query %s is also option%d", o, k+1)
		}
		for _, p := range opts[:k] {
			if p == o {
				return fmt.Sprintf("item %s shown twice", o)
			}
		}
	}
	for r, c := range choices {
		if c == "" {
			return fmt.Sprintf("too few choices: choice%d is empty", r+1)
		}
		shown := false
		for _, o := range opts {
			if o == c {
				shown = true
				break
			}
		}
		if !shown {
			return fmt.Sprintf("choice%d %s is not one of the references shown", r+1, c)
		}
		for _, p := range choices[:r] {
			if p == c {
				return fmt.Sprintf("item %s chosen twice", c)
			}
		}
	}
	return ""
}

// writeRows writes a header and rows to w through csvsafe (formula-like
// ids get a leading quote).
func writeRows(w io.Writer, what string, head []string, rows func(emit func([]string) error) error) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csvsafe.NewWriter(bw)
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	if err := rows(cw.Write); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

func namer(ids []string) func(int) string {
	if ids == nil {
		return strconv.Itoa
	}
	return func(i int) string { return ids[i] }
}

// WriteOddOneOut writes trials with the header item1,item2,item3,odd,
// naming items by ids[i] (or their index when ids is nil).
func WriteOddOneOut(w io.Writer, ids []string, ts []OddOneOut) error {
	name := namer(ids)
	return writeRows(w, "odd-one-out trials", OddHeader, func(emit func([]string) error) error {
		rec := make([]string, 4)
		for _, t := range ts {
			rec[0], rec[1], rec[2], rec[3] = name(t.Items[0]), name(t.Items[1]), name(t.Items[2]), name(t.Odd)
			if err := emit(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteRank writes trials of size spec with the header
// query,option1,…,optionN,choice1,…,choiceK. A trial of another size is a
// programmer's error and panics.
func WriteRank(w io.Writer, ids []string, spec RankSpec, ts []Rank) error {
	name := namer(ids)
	return writeRows(w, "rank trials", RankHeader(spec), func(emit func([]string) error) error {
		rec := make([]string, 1+spec.N+spec.K)
		for _, t := range ts {
			if len(t.Options) != spec.N || len(t.Choices) != spec.K {
				panic(fmt.Sprintf("trial: WriteRank: a %d-of-%d trial in a %s file", len(t.Choices), len(t.Options), spec))
			}
			rec[0] = name(t.Query)
			for k, o := range t.Options {
				rec[1+k] = name(o)
			}
			for k, c := range t.Choices {
				rec[1+spec.N+k] = name(c)
			}
			if err := emit(rec); err != nil {
				return err
			}
		}
		return nil
	})
}
