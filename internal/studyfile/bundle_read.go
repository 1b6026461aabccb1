package studyfile

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// BundleLimits bound what importing one bundle reads. Zero values take
// the defaults.
type BundleLimits struct {
	MaxImageBytes   int64 // one image (10 MiB)
	MaxItems        int   // rows of items.csv (100,000)
	MaxParticipants int   // rows of participants.csv (1,000,000)
	MaxAnswers      int   // rows of answers.csv (5,000,000)
	MaxCSVBytes     int64 // one CSV, unpacked (1 GiB)
	MaxImagesBytes  int64 // all images, as stored (4 GiB, as a study's images)
}

// Default bundle limits.
const (
	DefaultMaxImageBytes   = 10 << 20
	DefaultMaxItems        = 100_000
	DefaultMaxParticipants = 1_000_000
	DefaultMaxAnswers      = 5_000_000
	DefaultMaxCSVBytes     = 1 << 30
	DefaultMaxImagesBytes  = 4 << 30
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
	if l.MaxImagesBytes <= 0 {
		l.MaxImagesBytes = DefaultMaxImagesBytes
	}
	return l
}

// bundleReader reads a study bundle as streams: the manifest and the study
// settings when opened, then each CSV one row at a time, every row checked
// on its own and every image checked like an upload (media.Check), with
// type, size and hash taken from the bytes. Its rows are the store's import
// rows (study.RowSource). What needs the database (an answer's
// participant, a slug that is taken) is checked by the store.
type bundleReader struct {
	files    map[string]*zip.File
	lim      BundleLimits
	manifest BundleManifest
	study    BundleStudy
	format   study.StudyFormat // study.json's (triplet before version 4)
}

// bundleFormatFrom is the first bundle version with a study's format and
// its trials' options and choices.
const bundleFormatFrom = 4

// bundleFiles are the CSVs of a bundle and their manifest counts.
var bundleFiles = [...]string{"items", "participants", "answers"}

// invalidBundle is the error of a bundle refused for what it holds.
func invalidBundle(format string, args ...any) error {
	return invalid("not a valid study bundle: "+format, args...)
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
	// A format is version 4's: older bundles are triplet studies, read as
	// they always were.
	if b.manifest.Version < bundleFormatFrom {
		b.study.Format = ""
	}
	if b.format, err = study.ParseStudyFormat(b.study.Format); err != nil {
		return nil, invalidBundle("study.json: %v", err)
	}
	b.study.Format = b.format.String()
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
	name   string // items.csv, ...
	header []string
	rc     io.Closer
	cr     *csvlimit.Reader
	want   int
	rows   int
	parse  func(rec []string, line int) (T, error)
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
	return &bundleRows[T]{name: name, header: header, rc: rc, cr: cr, want: b.manifest.Counts[file], parse: parse,
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

// Err is why the rows stopped before their end, or nil.
func (r *bundleRows[T]) Err() error { return r.err }

// Close releases the file.
func (r *bundleRows[T]) Close() { r.rc.Close() }

// items reads items.csv. Every image is read (bounded) and checked with
// media.Check; its content type, size and hash must be what items.csv says.
// Indices must be 0..n-1 and hashes distinct.
func (b *bundleReader) items() (*bundleRows[study.ImportItem], error) {
	n := b.manifest.Counts["items"]
	seenIndex := make([]bool, n)
	seenHash := map[string]int{}
	var imagesBytes int64
	kindCol := -1 // set before the first row is read
	rows, err := openRows(b, "items", BundleItemColumns, b.lim.MaxItems, func(rec []string, line int) (study.ImportItem, error) {
		if len(rec) < len(BundleItemColumns) {
			return study.ImportItem{}, errors.New("too few fields")
		}
		if err := checkText(BundleItemColumns, rec); err != nil {
			return study.ImportItem{}, err
		}
		it := study.ImportItem{Label: rec[1], FileName: rec[2], ContentType: rec[3], SHA256: rec[4]}
		if err := media.CheckLabel(it.Label); err != nil {
			return study.ImportItem{}, fmt.Errorf("label: %v", err)
		}
		if len(it.FileName) > media.MaxFileNameBytes {
			return study.ImportItem{}, fmt.Errorf("file_name: %s, the limit is %d bytes", media.HumanBytes(int64(len(it.FileName))), media.MaxFileNameBytes)
		}
		var e1, e2, e3 error
		it.Index, e1 = strconv.Atoi(rec[0])
		it.Width, e2 = strconv.Atoi(rec[5])
		it.Height, e3 = strconv.Atoi(rec[6])
		if e1 != nil || it.Index < 0 || it.Index >= n {
			return study.ImportItem{}, fmt.Errorf("index %q is not one of 0..%d", rec[0], n-1)
		}
		if e2 != nil || e3 != nil {
			return study.ImportItem{}, errors.New("bad width or height")
		}
		if seenIndex[it.Index] {
			return study.ImportItem{}, fmt.Errorf("index %d is repeated", it.Index)
		}
		seenIndex[it.Index] = true
		if prev, dup := seenHash[it.SHA256]; dup {
			return study.ImportItem{}, fmt.Errorf("the same image (or sha256) as line %d", prev)
		}
		seenHash[it.SHA256] = line
		if kindCol >= 0 && kindCol < len(rec) {
			kind, ok := study.ParseItemKind(rec[kindCol])
			if !ok {
				return study.ImportItem{}, fmt.Errorf("kind %q is not one of image, text, audio, video", media.ShortName(rec[kindCol]))
			}
			text := ""
			if kindCol+1 < len(rec) {
				text = rec[kindCol+1]
			}
			switch kind {
			case study.ItemText:
				return textItem(it, rec[7], text)
			case study.ItemAudio, study.ItemVideo:
				if text != "" {
					return study.ImportItem{}, fmt.Errorf("a %s item with a text", mediaNoun[kind])
				}
				m, err := b.mediaItem(it, kind, rec[7], imagesBytes)
				if err != nil {
					return study.ImportItem{}, err
				}
				imagesBytes += int64(len(m.Data))
				return m, nil
			}
			if text != "" {
				return study.ImportItem{}, errors.New("an image item with a text")
			}
		}
		if rec[7] == "" {
			if it.ContentType != "" {
				return study.ImportItem{}, errors.New("an item with a content type needs an image")
			}
			return it, nil
		}
		f, ok := b.files[rec[7]]
		if !ok {
			return study.ImportItem{}, fmt.Errorf("the image %s is not in the bundle", rec[7])
		}
		if imagesBytes+int64(min(f.UncompressedSize64, 1<<62)) > b.lim.MaxImagesBytes {
			return study.ImportItem{}, fmt.Errorf("the images up to %s take more than %s, the limit of a study's images",
				rec[7], media.HumanBytes(b.lim.MaxImagesBytes))
		}
		data, err := media.ReadEntry(f, b.lim.MaxImageBytes)
		if err != nil {
			return study.ImportItem{}, fmt.Errorf("%s: %v", rec[7], err)
		}
		imagesBytes += int64(len(data))
		img, err := media.Check(rec[7], data, b.lim.MaxImageBytes)
		if err != nil {
			return study.ImportItem{}, fmt.Errorf("%s: %v", rec[7], err)
		}
		if err := media.CheckZipRatio(f); err != nil {
			return study.ImportItem{}, fmt.Errorf("%s: %v", rec[7], err)
		}
		if img.SHA256 != it.SHA256 {
			return study.ImportItem{}, fmt.Errorf("%s does not match its sha256", rec[7])
		}
		if img.ContentType != it.ContentType || img.Width != it.Width || img.Height != it.Height {
			return study.ImportItem{}, fmt.Errorf("%s is %s %d×%d, items.csv says %q %d×%d",
				rec[7], img.ContentType, img.Width, img.Height, it.ContentType, it.Width, it.Height)
		}
		it.Data = data
		return it, nil
	})
	if err != nil {
		return nil, err
	}
	if i := len(BundleItemColumns); i < len(rows.header) && rows.header[i] == BundleItemKindColumns[0] {
		if i+1 >= len(rows.header) || rows.header[i+1] != BundleItemKindColumns[1] {
			rows.Close()
			return nil, invalidBundle("items.csv: a kind column needs the text column after it")
		}
		kindCol = i
	}
	return rows, nil
}

// textItem is a bundle's text item (issue 29), checked as a text upload's
// are (media.CheckText) and against its row: no image, its sha256 that of
// its text, no dimensions.
func textItem(it study.ImportItem, image, text string) (study.ImportItem, error) {
	if image != "" {
		return study.ImportItem{}, errors.New("a text item with an image")
	}
	if err := media.CheckText(text); err != nil {
		return study.ImportItem{}, fmt.Errorf("text: %v", err)
	}
	if it.SHA256 != media.TextSHA256(text) {
		return study.ImportItem{}, errors.New("the text does not match its sha256")
	}
	if it.Width != 0 || it.Height != 0 {
		return study.ImportItem{}, errors.New("a text item with a width or height")
	}
	if it.ContentType != media.TextContentType {
		return study.ImportItem{}, fmt.Errorf("a text item's content type is %q", media.TextContentType)
	}
	it.Kind, it.Text = study.ItemText, text
	return it, nil
}

// participants reads participants.csv; the participant column is the key
// its answers name; the arm column, when the file has one (version 3), the
// participant's arm.
func (b *bundleReader) participants() (*bundleRows[study.ImportParticipant], error) {
	armCol := -1 // set before the first row is read
	rows, err := openRows(b, "participants", BundleParticipantColumns, b.lim.MaxParticipants, func(rec []string, line int) (study.ImportParticipant, error) {
		if len(rec) < len(BundleParticipantColumns) {
			return study.ImportParticipant{}, errors.New("too few fields")
		}
		if err := checkText(BundleParticipantColumns, rec); err != nil {
			return study.ImportParticipant{}, err
		}
		if rec[0] == "" {
			return study.ImportParticipant{}, errors.New("participant is empty")
		}
		var ts [3]*time.Time
		for i, v := range rec[3:6] {
			if v == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return study.ImportParticipant{}, fmt.Errorf("bad time %q", v)
			}
			ts[i] = &t
		}
		if ts[0] == nil {
			return study.ImportParticipant{}, errors.New("created_at is empty")
		}
		p := study.ImportParticipant{Key: rec[0], ExternalID: rec[1], CompletionCode: rec[2],
			CreatedAt: *ts[0], CompletedAt: ts[1], ExcludedAt: ts[2]}
		if armCol >= 0 && armCol < len(rec) && rec[armCol] != "" {
			arm, err := strconv.Atoi(rec[armCol])
			if arms := max(len(b.study.Arms), 1); err != nil || arm < 0 || arm >= arms {
				return study.ImportParticipant{}, fmt.Errorf("arm %q is not one of the study's arms 0..%d", rec[armCol], arms-1)
			}
			p.Arm = arm
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	if i := len(BundleParticipantColumns); i < len(rows.header) && rows.header[i] == BundleParticipantArmColumn {
		armCol = i
	}
	return rows, nil
}

// answers reads answers.csv; item indices must be below nItems. An
// answer's participant is the key of a row of participants.csv, checked by
// the store. The options and choices columns, when the file has them
// (version 4), hold an odd-one-out or rank study's trials (trialAnswer);
// a triplet study's rows leave them empty.
func (b *bundleReader) answers(nItems int) (*bundleRows[study.ImportAnswer], error) {
	trialCol := -1 // set before the first row is read
	rows, err := openRows(b, "answers", BundleAnswerColumns, b.lim.MaxAnswers, func(rec []string, line int) (study.ImportAnswer, error) {
		if len(rec) < len(BundleAnswerColumns) {
			return study.ImportAnswer{}, errors.New("too few fields")
		}
		if err := checkText(BundleAnswerColumns, rec); err != nil {
			return study.ImportAnswer{}, err
		}
		var v [5]int
		for i := range v {
			x, err := strconv.Atoi(rec[2+i])
			if err != nil || x < 0 || x >= nItems {
				return study.ImportAnswer{}, fmt.Errorf("%s is not an item index", BundleAnswerColumns[2+i])
			}
			v[i] = x
		}
		a := study.ImportAnswer{Line: line, Participant: rec[1], Anchor: v[0], Left: v[1], Right: v[2], Closer: v[3], Farther: v[4], Design: rec[7]}
		var options, choices string
		if trialCol >= 0 && trialCol+1 < len(rec) {
			options, choices = rec[trialCol], rec[trialCol+1]
		}
		if b.format.Format != study.FormatTriplet {
			if err := b.trialAnswer(&a, options, choices, nItems); err != nil {
				return study.ImportAnswer{}, err
			}
		} else {
			if options != "" || choices != "" {
				return study.ImportAnswer{}, errors.New("options and choices are for odd-one-out and rank trials: a triplet study's answers leave them empty")
			}
			if a.Anchor == a.Left || a.Anchor == a.Right || a.Left == a.Right ||
				!((a.Closer == a.Left && a.Farther == a.Right) || (a.Closer == a.Right && a.Farther == a.Left)) {
				return study.ImportAnswer{}, errors.New("closer and farther must be left and right, and differ from the anchor")
			}
		}
		if rec[8] != "" {
			x, err := strconv.Atoi(rec[8])
			if err != nil || x < 0 || x > study.MaxResponseMS {
				return study.ImportAnswer{}, errors.New("bad response_ms")
			}
			a.ResponseMS = &x
		}
		var e1, e2 error
		a.AskedAt, e1 = time.Parse(time.RFC3339Nano, rec[9])
		a.AnsweredAt, e2 = time.Parse(time.RFC3339Nano, rec[10])
		if e1 != nil || e2 != nil {
			return study.ImportAnswer{}, errors.New("bad asked_at or answered_at")
		}
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	if i := len(BundleAnswerColumns); b.manifest.Version >= bundleFormatFrom && i+1 < len(rows.header) &&
		rows.header[i] == BundleAnswerTrialColumns[0] && rows.header[i+1] == BundleAnswerTrialColumns[1] {
		trialCol = i
	}
	return rows, nil
}

// trialAnswer reads an odd-one-out or rank trial's options and choices
// into a, with internal/trial's checks (those of an answer to the
// question page: a choice among the items shown, none twice, as many as
// the format takes): the items shown are the format's number of distinct
// item indices below nItems, a rank trial's query (anchor) not among
// them; the question's key (anchor, left, right) is three of its items
// (odd-one-out: the three; rank: the query and two references); closer
// and farther are the first triplet the trial derives, whose anchor
// becomes the answer's (a.QuestionAnchor keeps the question's).
func (b *bundleReader) trialAnswer(a *study.ImportAnswer, optionsCell, choicesCell string, nItems int) error {
	f := b.format
	options, err := parseItems("options", optionsCell, f.Options(), nItems)
	if err != nil {
		return err
	}
	choices, err := parseItems("choices", choicesCell, f.Options(), nItems)
	if err != nil {
		return err
	}
	if len(options) != f.Options() {
		return fmt.Errorf("options: %d items, a %s trial shows %d", len(options), f, f.Options())
	}
	var derived triplet.Triplet
	switch f.Format {
	case study.FormatOddOneOut:
		t, err := trial.CheckOddOneOut([3]int(options), choices)
		if err != nil {
			return fmt.Errorf("choices: %v", err)
		}
		if err := t.Validate(nItems); err != nil {
			return err
		}
		key := []int{a.Anchor, a.Left, a.Right}
		for _, o := range options {
			if !slices.Contains(key, o) {
				return fmt.Errorf("anchor, left and right must be the trial's three options (%s)", optionsCell)
			}
		}
		derived = t.Triplets(nil)[0]
	case study.FormatRank:
		t := trial.Rank{Query: a.Anchor, Options: options, Choices: choices}
		if err := t.Validate(nItems, f.Rank); err != nil {
			return err
		}
		if a.Left == a.Right || !slices.Contains(options, a.Left) || !slices.Contains(options, a.Right) {
			return errors.New("left and right must be two of the trial's options")
		}
		derived = t.Triplets(nil)[0]
	}
	if a.Closer != derived.Closer || a.Farther != derived.Farther {
		return fmt.Errorf("closer and farther must be the first triplet the trial derives (%d, %d)", derived.Closer, derived.Farther)
	}
	if derived.Anchor != a.Anchor {
		q := a.Anchor
		a.QuestionAnchor = &q
	}
	a.Anchor, a.Options, a.Choices = derived.Anchor, options, choices
	return nil
}

// parseItems reads a cell of at most max item indices below nItems,
// separated by spaces.
func parseItems(column, cell string, max, nItems int) ([]int, error) {
	fields := strings.Fields(cell)
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s is empty: the study's answers are trials", column)
	}
	if len(fields) > max {
		return nil, fmt.Errorf("%s: %d items, more than a trial shows (%d)", column, len(fields), max)
	}
	xs := make([]int, len(fields))
	for i, s := range fields {
		x, err := strconv.Atoi(s)
		if err != nil || x < 0 || x >= nItems {
			return nil, fmt.Errorf("%s: %q is not an item index", column, s)
		}
		xs[i] = x
	}
	return xs, nil
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

// mediaNoun names a sound or a video item in messages.
var mediaNoun = map[study.ItemKind]string{study.ItemAudio: "sound", study.ItemVideo: "video"}

// mediaItem reads and checks a sound's or a video's file (issue 29) as an
// upload's is checked: by content (avfile.ProbeAudio within the study's
// longest sound, avfile.ProbeVideo within its defaults), within the
// study's bytes after used, its type and picture size (none for a sound)
// the probe's and its sha256 what items.csv says.
func (b *bundleReader) mediaItem(it study.ImportItem, kind study.ItemKind, name string, used int64) (study.ImportItem, error) {
	f, ok := b.files[name]
	if name == "" || !ok {
		return study.ImportItem{}, fmt.Errorf("the %s %q is not in the bundle", mediaNoun[kind], name)
	}
	lim, probe := avfile.DefaultVideo(), avfile.ProbeVideo
	if kind == study.ItemAudio {
		lim, probe = avfile.DefaultAudio(), avfile.ProbeAudio
		// Out of bounds, the study itself was refused before its items are read.
		if secs := b.study.SoundMaxSeconds; secs > 0 {
			lim.MaxDuration = time.Duration(secs) * time.Second
		}
	}
	if used+int64(min(f.UncompressedSize64, 1<<62)) > b.lim.MaxImagesBytes {
		return study.ImportItem{}, fmt.Errorf("the items up to %s take more than %s, the limit of a study's items",
			name, media.HumanBytes(b.lim.MaxImagesBytes))
	}
	data, err := media.ReadEntry(f, lim.MaxBytes)
	if err != nil {
		return study.ImportItem{}, fmt.Errorf("%s: %v", name, err)
	}
	if err := media.CheckZipRatio(f); err != nil {
		return study.ImportItem{}, fmt.Errorf("%s: %v", name, err)
	}
	info, err := probe(bytes.NewReader(data), int64(len(data)), lim)
	if err != nil {
		return study.ImportItem{}, fmt.Errorf("%s: %v", name, err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != it.SHA256 {
		return study.ImportItem{}, fmt.Errorf("%s does not match its sha256", name)
	}
	if info.MIME != it.ContentType || it.Width != info.Width || it.Height != info.Height {
		return study.ImportItem{}, fmt.Errorf("%s is %s %d×%d, items.csv says %q %d×%d", name, info.MIME, info.Width, info.Height, it.ContentType, it.Width, it.Height)
	}
	it.Kind, it.Data = kind, data
	return it, nil
}
