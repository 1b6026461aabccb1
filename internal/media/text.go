package media

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/csvlimit"
)

// Text items (issue 29): a word or a sentence shown as text. The checks
// here are the one definition of an acceptable text, applied to what a
// researcher types, to a .txt or CSV upload, to a bundle's items and again
// by the store before anything is written.

// MinTextChars and MaxTextChars bound a text item in characters (the
// items table's CHECK says the same). 500 characters is a short
// paragraph: the longest that still fits beside two others on a phone.
const (
	MinTextChars = 1
	MaxTextChars = 500
)

// MaxTextItems bounds the items of one text upload (typed or a file): the
// same order as the images of a zip, and more than a similarity study
// can ask about (n² comparisons).
const MaxTextItems = 5000

// MaxStudyTextItems bounds the text items of a study, however many
// uploads brought them: 20,000 texts of at most 500 characters is at
// most 40 MB, and more items than any similarity study asks about.
const MaxStudyTextItems = 20_000

// MaxTextUploadBytes bounds the bytes of one text upload, read as a
// stream: MaxTextItems lines of MaxTextChars four-byte characters is
// 10 MB, so 16 MiB refuses nothing a valid upload holds.
const MaxTextUploadBytes = 16 << 20

// maxTextLineBytes bounds one line as read (before its characters are
// counted): MaxTextChars characters of four bytes, a CSV label and
// quoting. A longer line is refused as too long without being kept.
const maxTextLineBytes = 4*(MaxTextChars+MaxLabelChars) + 64

// TextContentType is a text item's content type: it has no bytes to
// serve, the type says what its text is.
const TextContentType = "text/plain; charset=utf-8"

// TextItem is one accepted text item of an upload.
type TextItem struct {
	Line  int    // the line of the input it came from (1-based)
	Label string // the CSV's label, or the text itself (cut to MaxLabelChars)
	Text  string
}

// SHA256 is the hex sha256 of the item's text: its stable id, and what
// refuses the same text twice in a study.
func (t TextItem) SHA256() string { return TextSHA256(t.Text) }

// TextSHA256 is the hex sha256 of a text item's UTF-8 bytes.
func TextSHA256(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// TextError is a refused text upload: the line that broke a rule and why
// (Line 0: the whole input).
type TextError struct {
	Line   int
	Reason string
}

func (e *TextError) Error() string {
	if e.Line == 0 {
		return e.Reason
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// CheckText refuses a text item that is empty (or only spaces), longer
// than MaxTextChars, not valid UTF-8, or that holds a NUL, another control
// character (tabs and line breaks included: an item is one line) or a
// bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069), which
// would let an item reorder what the page shows around it. The error's
// text is the reason.
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty (an item has %d to %d characters)", MinTextChars, MaxTextChars)
	}
	if n := utf8.RuneCountInString(s); n > MaxTextChars {
		return fmt.Errorf("%s, the limit is %s", plural(int64(n), "character"), plural(MaxTextChars, "character"))
	}
	for i, r := range s {
		switch {
		case r == 0:
			return fmt.Errorf("a NUL character at character %d", utf8.RuneCountInString(s[:i])+1)
		case r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069:
			return fmt.Errorf("a bidirectional override character (U+%04X) at character %d", r, utf8.RuneCountInString(s[:i])+1)
		case unicode.IsControl(r):
			return fmt.Errorf("a control character (U+%04X) at character %d", r, utf8.RuneCountInString(s[:i])+1)
		}
	}
	return nil
}

// TextLabel is the label of a text item given none: the text itself, cut
// to MaxLabelChars characters (with an ellipsis) so that it is a name.
func TextLabel(text string) string {
	if utf8.RuneCountInString(text) <= MaxLabelChars {
		return text
	}
	n := 0
	for i := range text {
		if n == MaxLabelChars-1 {
			return text[:i] + "…"
		}
		n++
	}
	return text
}

// ReadTextLines reads text items one per line (typed into the study page
// or a UTF-8 .txt file) as a stream: at most MaxTextUploadBytes and
// MaxTextItems, each line checked (CheckText) after its surrounding
// spaces and a Windows line end are removed. A byte-order mark at the
// start is skipped; blank lines at the end are ignored, a blank line
// before another item is refused. The same text twice is refused with
// both lines. Nothing is returned on a refusal.
func ReadTextLines(r io.Reader) ([]TextItem, error) {
	lr := &limitedReader{r: r, n: MaxTextUploadBytes}
	br := bufio.NewReaderSize(lr, 64<<10)
	var items []TextItem
	seen := map[string]int{}
	blank := 0 // the first blank line since the last item
	for line := 1; ; line++ {
		raw, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				return nil, &TextError{line, fmt.Sprintf("longer than %s", plural(MaxTextChars, "character"))}
			}
			if lr.over {
				return nil, &TextError{0, fmt.Sprintf("larger than %s (the limit of one upload)", HumanBytes(MaxTextUploadBytes))}
			}
			return nil, err
		}
		if line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\uFEFF"))
		}
		if lr.over {
			return nil, &TextError{0, fmt.Sprintf("larger than %s (the limit of one upload)", HumanBytes(MaxTextUploadBytes))}
		}
		eof := errors.Is(err, io.EOF)
		text := strings.Trim(string(raw), " \t")
		if text == "" {
			if eof {
				break
			}
			if blank == 0 {
				blank = line
			}
			continue
		}
		if blank != 0 {
			return nil, &TextError{blank, fmt.Sprintf("empty (an item has %d to %d characters; remove the blank line)", MinTextChars, MaxTextChars)}
		}
		if err := CheckText(text); err != nil {
			return nil, &TextError{line, err.Error()}
		}
		if prev, dup := seen[text]; dup {
			return nil, &TextError{line, fmt.Sprintf("the same text as line %d", prev)}
		}
		seen[text] = line
		if len(items) == MaxTextItems {
			return nil, &TextError{0, fmt.Sprintf("more than %d items (the limit of one upload)", MaxTextItems)}
		}
		items = append(items, TextItem{Line: line, Label: TextLabel(text), Text: text})
		if eof {
			break
		}
	}
	if len(items) == 0 {
		return nil, &TextError{0, "no items: type or upload one item per line"}
	}
	return items, nil
}

// ReadTextCSV reads text items from a CSV of label,text (a first row
// "label,text" is a header and skipped) as a stream, bounded as
// ReadTextLines. The label may be empty (the text is the label); both
// are checked, the same text twice refused.
func ReadTextCSV(r io.Reader) ([]TextItem, error) {
	cr := csvlimit.NewReader(bomSkipper(r), csvlimit.Limits{MaxRows: MaxTextItems, MaxRecordBytes: maxTextLineBytes, MaxBytes: MaxTextUploadBytes})
	cr.CSV().FieldsPerRecord = -1
	var items []TextItem
	seen := map[string]int{}
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var le *csvlimit.LimitError
			if errors.As(err, &le) {
				return nil, &TextError{0, le.Error()}
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &TextError{pe.Line, "not a CSV row: " + pe.Err.Error()}
			}
			return nil, &TextError{0, err.Error()}
		}
		line := cr.Line()
		if len(rec) != 2 {
			return nil, &TextError{line, fmt.Sprintf("%d fields, expected 2 (label,text)", len(rec))}
		}
		if first && strings.EqualFold(strings.TrimSpace(rec[0]), "label") && strings.EqualFold(strings.TrimSpace(rec[1]), "text") {
			continue
		}
		label, text := strings.Trim(rec[0], " \t"), strings.Trim(rec[1], " \t")
		if err := CheckText(text); err != nil {
			return nil, &TextError{line, "text: " + err.Error()}
		}
		if label == "" {
			label = TextLabel(text)
		} else {
			if !utf8.ValidString(label) {
				return nil, &TextError{line, "label: not valid UTF-8"}
			}
			if err := CheckLabel(label); err != nil {
				return nil, &TextError{line, "label: " + err.Error()}
			}
			if err := CheckText(label); err != nil {
				return nil, &TextError{line, "label: " + err.Error()}
			}
		}
		if prev, dup := seen[text]; dup {
			return nil, &TextError{line, fmt.Sprintf("the same text as line %d", prev)}
		}
		seen[text] = line
		if len(items) == MaxTextItems {
			return nil, &TextError{0, fmt.Sprintf("more than %d items (the limit of one upload)", MaxTextItems)}
		}
		items = append(items, TextItem{Line: line, Label: label, Text: text})
	}
	if len(items) == 0 {
		return nil, &TextError{0, "no items: one row of label,text per item"}
	}
	return items, nil
}

// errLineTooLong is readLine's refusal of a line past maxTextLineBytes.
var errLineTooLong = errors.New("line too long")

// readLine reads one line without its "\n" or "\r\n", at most
// maxTextLineBytes of it; io.EOF with the last line when no "\n" ends it.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxTextLineBytes+2 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		}
		if err == nil || errors.Is(err, io.EOF) {
			return line, err
		}
		return nil, err
	}
}

// limitedReader reads at most n bytes and then notes that there were more.
type limitedReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := io.ReadFull(l.r, one[:]); k > 0 {
			l.over = true
			return 0, errors.New("too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// bomSkipper drops a UTF-8 byte-order mark at the start of r (spreadsheet
// programs write one before a CSV).
func bomSkipper(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\uFEFF")) {
		_, _ = br.Discard(3)
	}
	return br
}
