// Package csvsafe writes CSV that a spreadsheet opens as data, never as
// formulas. Labels come from uploaded file names and external ids from
// anyone who joins a study, so a cell such as =HYPERLINK(...) would
// otherwise run when a researcher opens an export in Excel or LibreOffice.
//
// The rule is OWASP's ("CSV Injection"), applied a little wider: a cell
// gets a leading single quote when, after any leading white space and
// single quotes, it starts with = + - @ or their full-width forms
// (＝ ＋ － ＠), or when that leading run holds a tab or a carriage
// return. Plain numbers (-0.5, +3, -1e-05, -Inf) are never changed, so
// numeric columns stay numbers. White space is skipped because some
// importers trim it before they look for a formula; the full-width forms
// because some spreadsheets (East Asian input) read them as the ASCII
// signs. The quote is what a spreadsheet shows as a text marker; Unescape
// removes it exactly, so the change is reversible (see Cell).
package csvsafe

import (
	"encoding/csv"
	"io"
	"unicode"
	"unicode/utf8"
)

// Cell returns s as a spreadsheet will not run it: s with a single quote
// in front when Risky(s), s itself otherwise. Unescape(Cell(s)) == s for
// every s: a cell that already starts with quotes before a formula sign
// gets one more, so a quote the data had is never taken for ours.
func Cell(s string) string {
	if Risky(s) {
		return "'" + s
	}
	return s
}

// Unescape undoes Cell: it drops the leading single quote of a cell that
// Cell would have produced from a risky one, and returns any other cell
// unchanged. Readers of files closer wrote call it on text cells.
func Unescape(s string) string {
	if len(s) > 1 && s[0] == '\'' && Risky(s[1:]) {
		return s[1:]
	}
	return s
}

// Risky reports whether a spreadsheet could take s for a formula (the
// rule in the package comment).
func Risky(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; c < utf8.RuneSelf && !isLead(c) {
		return false // the common case: a digit, a letter, a dot
	}
	if isPlainNumber(s) {
		return false
	}
	for _, r := range s {
		switch r {
		case '\t', '\r':
			return true
		case '=', '+', '-', '@', '＝', '＋', '－', '＠':
			return true
		case '\'':
			continue
		}
		if unicode.IsSpace(r) {
			continue
		}
		return false
	}
	return false
}

// isLead reports whether an ASCII byte may begin a risky cell.
func isLead(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\'', ' ', '\t', '\r', '\n', '\v', '\f':
		return true
	}
	return false
}

// isPlainNumber reports whether s is a decimal number as Go and
// spreadsheets write it: an optional sign, digits with an optional
// fraction, an optional exponent; or ±Inf and NaN as strconv formats them.
func isPlainNumber(s string) bool {
	switch s {
	case "NaN", "Inf", "+Inf", "-Inf":
		return true
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// Writer is a csv.Writer that passes every cell through Cell. Every CSV
// closer writes for people goes through one.
type Writer struct {
	cw  *csv.Writer
	rec []string
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{cw: csv.NewWriter(w)} }

// Write writes one record, its risky cells quoted; rec is not modified.
func (w *Writer) Write(rec []string) error {
	w.rec = w.rec[:0]
	for _, s := range rec {
		w.rec = append(w.rec, Cell(s))
	}
	return w.cw.Write(w.rec)
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() { w.cw.Flush() }

// Error reports any error from a previous Write or Flush.
func (w *Writer) Error() error { return w.cw.Error() }
