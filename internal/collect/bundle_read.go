package collect

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/media"
)

// BundleLimits bound what importing one bundle reads. Zero values take
// the defaults.
type BundleLimits struct {
	MaxImageBytes   int64 // one image (10 MiB)
	MaxItems        int   // rows of items.csv (100,000)
	MaxParticipants int   // rows of participants.csv (1,000,000)
	MaxAnswers      int   // rows of answers.csv (5,000,000)
	MaxCSVBytes     int64 // one CSV, unpacked (1 GiB)
}

// Default bundle limits.
const (
	DefaultMaxImageBytes   = 10 << 20
	DefaultMaxItems        = 100_000
	DefaultMaxParticipants = 1_000_000
	DefaultMaxAnswers      = 5_000_000
	DefaultMaxCSVBytes     = 1 << 30
)

func (l BundleLimits) withDefaults() BundleLimits {
	if l.MaxImageBytes <= 0 {
		l.MaxImageBytes = DefaultMaxImageBytes
	}
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultMaxItems
	}
	if l.MaxParticipants <= 0 {
		l.MaxParticipants = DefaultMaxParticipants
	}
	if l.MaxAnswers <= 0 {
		l.MaxAnswers = DefaultMaxAnswers
	}
	if l.MaxCSVBytes <= 0 {
		l.MaxCSVBytes = DefaultMaxCSVBytes
	}
	return l
}

// bundleReader reads a study bundle as streams: the manifest and the study
// settings when opened, then each CSV one row at a time, every row checked
// on its own and every image checked like an upload (media.Check), with
// type, size and hash taken from the bytes. What needs the database (an
// answer's participant, a slug that is taken) is checked by the store.
type bundleReader struct {
	files    map[string]*zip.File
	lim      BundleLimits
	manifest BundleManifest
	study    BundleStudy
}

// bundleFiles are the CSVs of a bundle and their manifest counts.
var bundleFiles = [...]string{"items", "participants", "answers"}

// invalidBundle is the error of a bundle refused for what it holds.
func invalidBundle(format string, args ...any) error {
	return userErr(KindInvalid, "not a valid study bundle: "+format, args...)
}

// openBundle reads a bundle's table of contents, manifest.json and
// study.json.
func openBundle(r io.ReaderAt, size int64, lim BundleLimits) (*bundleReader, error) {
	lim = lim.withDefaults()
	zr, err := media.OpenZip(r, size, lim.MaxItems+1000)
	if err != nil {
		return nil, invalidBundle("%v", err)
	}
	b := &bundleReader{files: make(map[string]*zip.File, len(zr.File)), lim: lim}
	for _, f := range zr.File {
		if _, dup := b.files[f.Name]; dup {
			return nil, invalidBundle("the zip holds %q twice", f.Name)
		}
		b.files[f.Name] = f
	}
	data, err := b.read("manifest.json", 1<<20)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &b.manifest); err != nil || b.manifest.Format != BundleFormat {
		return nil, invalidBundle("manifest.json does not name the format %q", BundleFormat)
	}
	if v := b.manifest.Version; v < 1 || v > BundleVersion {
		return nil, invalidBundle("version %d (this app reads versions 1 to %d)", v, BundleVersion)
	}
	limits := map[string]int{"items": lim.MaxItems, "participants": lim.MaxParticipants, "answers": lim.MaxAnswers}
	for _, name := range bundleFiles {
		n, ok := b.manifest.Counts[name]
		if !ok || n < 0 {
			return nil, invalidBundle("manifest.json has no count of %s", name)
		}
		if n > limits[name] {
			return nil, invalidBundle("manifest.json counts %d %s; the limit is %d", n, name, limits[name])
		}
	}
	if data, err = b.read("study.json", 1<<20); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &b.study); err != nil {
		return nil, invalidBundle("study.json: %v", err)
	}
	return b, nil
}

// read reads a whole (small) file of the bundle.
func (b *bundleReader) read(name string, limit int64) ([]byte, error) {
	f, ok := b.files[name]
	if !ok {
		return nil, invalidBundle("%s is missing", name)
	}
	data, err := media.ReadEntry(f, limit)
	if err != nil {
		return nil, invalidBundle("%s: %v", name, err)
	}
	return data, nil
}

// bundleRows iterates over the rows of one CSV of a bundle. At the end of
// the file it checks the number of rows against the manifest.
type bundleRows[T any] struct {
	name  string // items.csv, ...
	rc    io.Closer
	cr    *csvlimit.Reader
	want  int
	rows  int
	parse func(rec []string, line int) (T, error)
	// unescape undoes csvsafe.Cell (bundles of version 2 and later).
	unescape bool
	cur      T
	err      error
}

func openRows[T any](b *bundleReader, file string, columns []string, maxRows int, parse func([]string, int) (T, error)) (*bundleRows[T], error) {
	name := file + ".csv"
	f, ok := b.files[name]
	if !ok {
		return nil, invalidBundle("%s is missing", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, invalidBundle("%s: %v", name, err)
	}
	cr := csvlimit.NewReader(rc, csvlimit.Limits{MaxRows: maxRows, MaxBytes: b.lim.MaxCSVBytes})
	header, err := cr.Read()
	if err != nil {
		rc.Close()
		if err == io.EOF {
			return nil, invalidBundle("%s has no header", name)
		}
		return nil, invalidBundle("%s: %v", name, err)
	}
	for i, c := range columns {
		if i >= len(header) || header[i] != c {
			rc.Close()
			return nil, invalidBundle("%s: expected the columns %s", name, strings.Join(columns, ","))
		}
	}
	return &bundleRows[T]{name: name, rc: rc, cr: cr, want: b.manifest.Counts[file], parse: parse,
		unescape: b.manifest.Version >= bundleEscapedFrom}, nil
}

// Next reads and checks the next row; false at the end or on an error.
func (r *bundleRows[T]) Next() bool {
	if r.err != nil {
		return false
	}
	rec, err := r.cr.Read()
	if err == io.EOF {
		if r.rows != r.want {
			r.err = invalidBundle("%s has %d rows, manifest.json counts %d", r.name, r.rows, r.want)
		}
		return false
	}
	if err != nil {
		r.err = invalidBundle("%s: %v", r.name, err)
		return false
	}
	line := r.cr.Line()
	if r.unescape {
		for i, c := range rec {
			rec[i] = csvsafe.Unescape(c)
		}
	}
	if r.rows++; r.rows > r.want {
		r.err = invalidBundle("%s line %d: more rows than manifest.json counts (%d)", r.name, line, r.want)
		return false
	}
	if r.cur, err = r.parse(rec, line); err != nil {
		r.err = invalidBundle("%s line %d: %v", r.name, line, err)
		return false
	}
	return true
}

// Value is the current row.
func (r *bundleRows[T]) Value() T { return r.cur }

// Line is the line of the file where the current row starts.
func (r *bundleRows[T]) Line() int { return r.cr.Line() }

// Err is why the rows stopped before their end, or nil.
func (r *bundleRows[T]) Err() error { return r.err }

// Close releases the file.
func (r *bundleRows[T]) Close() { r.rc.Close() }

// bundleItem is a checked row of items.csv.
type bundleItem struct {
	index           int
	label, fileName string
	contentType     string
	sha256          string
	width, height   int
	data            []byte // nil for a label-only item
}

// items reads items.csv. Every image is read (bounded) and checked with
// media.Check; its content type, size and hash must be what items.csv says.
// Indices must be 0..n-1 and hashes distinct.
func (b *bundleReader) items() (*bundleRows[bundleItem], error) {
	n := b.manifest.Counts["items"]
	seenIndex := make([]bool, n)
	seenHash := map[string]int{}
	return openRows(b, "items", BundleItemColumns, b.lim.MaxItems, func(rec []string, line int) (bundleItem, error) {
		if len(rec) < len(BundleItemColumns) {
			return bundleItem{}, errors.New("too few fields")
		}
		if err := checkText(BundleItemColumns, rec); err != nil {
			return bundleItem{}, err
		}
		it := bundleItem{label: rec[1], fileName: rec[2], contentType: rec[3], sha256: rec[4]}
		var e1, e2, e3 error
		it.index, e1 = strconv.Atoi(rec[0])
		it.width, e2 = strconv.Atoi(rec[5])
		it.height, e3 = strconv.Atoi(rec[6])
		if e1 != nil || it.index < 0 || it.index >= n {
			return bundleItem{}, fmt.Errorf("index %q is not one of 0..%d", rec[0], n-1)
		}
		if e2 != nil || e3 != nil {
			return bundleItem{}, errors.New("bad width or height")
		}
		if seenIndex[it.index] {
			return bundleItem{}, fmt.Errorf("index %d is repeated", it.index)
		}
		seenIndex[it.index] = true
		if prev, dup := seenHash[it.sha256]; dup {
			return bundleItem{}, fmt.Errorf("the same image (or sha256) as line %d", prev)
		}
		seenHash[it.sha256] = line
		if rec[7] == "" {
			if it.contentType != "" {
				return bundleItem{}, errors.New("an item with a content type needs an image")
			}
			return it, nil
		}
		f, ok := b.files[rec[7]]
		if !ok {
			return bundleItem{}, fmt.Errorf("the image %s is not in the bundle", rec[7])
		}
		data, err := media.ReadEntry(f, b.lim.MaxImageBytes)
		if err != nil {
			return bundleItem{}, fmt.Errorf("%s: %v", rec[7], err)
		}
		img, err := media.Check(rec[7], data, b.lim.MaxImageBytes)
		if err != nil {
			return bundleItem{}, fmt.Errorf("%s: %v", rec[7], err)
		}
		if img.SHA256 != it.sha256 {
			return bundleItem{}, fmt.Errorf("%s does not match its sha256", rec[7])
		}
		if img.ContentType != it.contentType || img.Width != it.width || img.Height != it.height {
			return bundleItem{}, fmt.Errorf("%s is %s %d×%d, items.csv says %q %d×%d",
				rec[7], img.ContentType, img.Width, img.Height, it.contentType, it.width, it.height)
		}
		it.data = data
		return it, nil
	})
}

// bundleParticipant is a checked row of participants.csv.
type bundleParticipant struct {
	id, externalID, completionCode string
	created                        time.Time
	completed, excluded            *time.Time
}

func (b *bundleReader) participants() (*bundleRows[bundleParticipant], error) {
	return openRows(b, "participants", BundleParticipantColumns, b.lim.MaxParticipants, func(rec []string, line int) (bundleParticipant, error) {
		if len(rec) < len(BundleParticipantColumns) {
			return bundleParticipant{}, errors.New("too few fields")
		}
		if err := checkText(BundleParticipantColumns, rec); err != nil {
			return bundleParticipant{}, err
		}
		if rec[0] == "" {
			return bundleParticipant{}, errors.New("participant is empty")
		}
		var ts [3]*time.Time
		for i, v := range rec[3:6] {
			if v == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return bundleParticipant{}, fmt.Errorf("bad time %q", v)
			}
			ts[i] = &t
		}
		if ts[0] == nil {
			return bundleParticipant{}, errors.New("created_at is empty")
		}
		return bundleParticipant{id: rec[0], externalID: rec[1], completionCode: rec[2],
			created: *ts[0], completed: ts[1], excluded: ts[2]}, nil
	})
}

// bundleAnswer is a checked row of answers.csv (its participant is the
// bundle's id, checked by the store).
type bundleAnswer struct {
	participant                          string
	anchor, left, right, closer, farther int
	design                               string
	ms                                   *int
	asked, answered                      time.Time
}

// answers reads answers.csv; item indices must be below nItems.
func (b *bundleReader) answers(nItems int) (*bundleRows[bundleAnswer], error) {
	return openRows(b, "answers", BundleAnswerColumns, b.lim.MaxAnswers, func(rec []string, line int) (bundleAnswer, error) {
		if len(rec) < len(BundleAnswerColumns) {
			return bundleAnswer{}, errors.New("too few fields")
		}
		if err := checkText(BundleAnswerColumns, rec); err != nil {
			return bundleAnswer{}, err
		}
		var v [5]int
		for i := range v {
			x, err := strconv.Atoi(rec[2+i])
			if err != nil || x < 0 || x >= nItems {
				return bundleAnswer{}, fmt.Errorf("%s is not an item index", BundleAnswerColumns[2+i])
			}
			v[i] = x
		}
		a := bundleAnswer{participant: rec[1], anchor: v[0], left: v[1], right: v[2], closer: v[3], farther: v[4], design: rec[7]}
		if a.anchor == a.left || a.anchor == a.right || a.left == a.right ||
			!((a.closer == a.left && a.farther == a.right) || (a.closer == a.right && a.farther == a.left)) {
			return bundleAnswer{}, errors.New("closer and farther must be left and right, and differ from the anchor")
		}
		if rec[8] != "" {
			x, err := strconv.Atoi(rec[8])
			if err != nil || x < 0 || x > MaxResponseMS {
				return bundleAnswer{}, errors.New("bad response_ms")
			}
			a.ms = &x
		}
		var e1, e2 error
		a.asked, e1 = time.Parse(time.RFC3339Nano, rec[9])
		a.answered, e2 = time.Parse(time.RFC3339Nano, rec[10])
		if e1 != nil || e2 != nil {
			return bundleAnswer{}, errors.New("bad asked_at or answered_at")
		}
		return a, nil
	})
}

// checkText refuses fields that PostgreSQL cannot store as text (NUL bytes,
// invalid UTF-8), naming the column.
func checkText(columns []string, rec []string) error {
	for i, c := range columns {
		if !utf8.ValidString(rec[i]) || strings.IndexByte(rec[i], 0) >= 0 {
			return fmt.Errorf("%s holds a NUL byte or invalid UTF-8", c)
		}
	}
	return nil
}
