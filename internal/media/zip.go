package media

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// MaxZipEntries bounds the files one zip archive may list.
const MaxZipEntries = 20_000

// zipDirectoryBytesPerEntry bounds the table of contents per allowed entry
// (a name of a few hundred bytes and its extra fields): archive/zip keeps
// about five times the table's size in memory, so the table is measured
// while it is read, before the entries are counted.
const zipDirectoryBytesPerEntry = 512

// MaxZipRatio bounds how much an image larger than zipRatioFloor may have
// been compressed in a zip. Image formats compress their pixels already, so
// a zip shrinks a real image by a few percent; an image that shrank more
// than this is padding or metadata that would be stored in full (the
// probe's 1 MB zip of images that stored 1 GB).
const MaxZipRatio = 10

// zipRatioFloor exempts small images from MaxZipRatio: their headers and
// a small palette may compress well, and they cost little to store.
const zipRatioFloor = 1 << 20

// ZipLimits bound what reading one zip archive costs.
type ZipLimits struct {
	MaxImageBytes int64 // one entry (as for a single image)
	MaxEntries    int   // the files the archive lists (0: MaxZipEntries)
	MaxExpanded   int64 // the bytes of all entries read, together (0: no limit)
	// Check checks an entry's bytes instead of Check(name, data,
	// MaxImageBytes) (nil: that), so that a caller may accept sounds as
	// well; MaxImageBytes then bounds every entry read.
	Check func(name string, data []byte) (Image, error)
}

// IsZip reports whether data starts like a zip archive (a local file
// header, or the end record of an empty archive).
func IsZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) ||
		bytes.HasPrefix(head, []byte("PK\x07\x08"))
}

// OpenZip opens a zip archive of size bytes, refusing one whose table of
// contents lists more than maxEntries files (0: MaxZipEntries). The table is
// read with memory bounded by maxEntries, whatever the archive claims. The
// error's text is the reason.
func OpenZip(r io.ReaderAt, size int64, maxEntries int) (*zip.Reader, error) {
	if maxEntries <= 0 {
		maxEntries = MaxZipEntries
	}
	cr := &cappedReaderAt{r: r, left: 70<<10 + int64(maxEntries)*zipDirectoryBytesPerEntry}
	zr, err := zip.NewReader(cr, size)
	cr.left = -1 // the entries' data is bounded by the callers
	if errors.Is(err, errDirectoryTooLarge) {
		return nil, fmt.Errorf("the zip lists too many files (the limit is %s)", plural(int64(maxEntries), "file"))
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("not a readable zip file: %v", err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("the zip lists too many files (%s, the limit is %s)", plural(int64(len(zr.File)), "file"), plural(int64(maxEntries), "file"))
	}
	return zr, nil
}

var errDirectoryTooLarge = errors.New("zip table of contents too large")

// cappedReaderAt fails once more than left bytes were read (left < 0: no cap).
type cappedReaderAt struct {
	r    io.ReaderAt
	left int64
}

func (c *cappedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.left >= 0 {
		if int64(len(p)) > c.left {
			return 0, errDirectoryTooLarge
		}
		c.left -= int64(len(p))
	}
	return c.r.ReadAt(p, off)
}

// ReadEntry reads one entry of at most limit bytes. The size the archive
// declares is checked first; archive/zip makes the entry's data match it.
func ReadEntry(f *zip.File, limit int64) ([]byte, error) {
	return readEntry(f, limit, nil)
}

// readEntry is ReadEntry into buf when it is large enough.
func readEntry(f *zip.File, limit int64, buf []byte) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, errors.New(TooLarge(int64(min(f.UncompressedSize64, 1<<62)), limit))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("cannot be read from the zip: %v", err)
	}
	defer rc.Close()
	n := int(f.UncompressedSize64)
	if cap(buf) < n+1 {
		buf = make([]byte, n+1)
	}
	buf = buf[:n+1]
	k, err := io.ReadFull(rc, buf)
	if err != io.ErrUnexpectedEOF && err != io.EOF {
		if err == nil {
			err = errors.New("more data than the zip declares")
		}
		return nil, fmt.Errorf("cannot be read from the zip: %v", err)
	}
	if k != n {
		return nil, fmt.Errorf("cannot be read from the zip: %d bytes, the zip declares %d", k, n)
	}
	return buf[:k], nil
}

// ReadZip checks every file of the zip archive called name with Check.
// Directories, macOS resource forks (__MACOSX/) and hidden files are
// skipped silently; entries with unsafe paths (absolute, or leaving the
// archive with ..) are rejected without being read. If the archive itself
// cannot be read, holds nothing, or lists too many files, the single
// rejection names it; once lim.MaxExpanded bytes were read, the rest is
// rejected unread. An image that the zip compressed more than MaxZipRatio
// times is rejected: an image format leaves a zip little to compress. Accepted images do not keep their bytes in memory:
// Image.Bytes reads them from r again, which must stay open until then.
// expanded is the number of bytes unpacked.
func ReadZip(name string, r io.ReaderAt, size int64, lim ZipLimits) (images []Image, rejected []Rejection, expanded int64) {
	zr, err := OpenZip(r, size, lim.MaxEntries)
	if err != nil {
		return nil, []Rejection{{Name: name, Reason: err.Error()}}, 0
	}
	if lim.MaxImageBytes <= 0 {
		lim.MaxImageBytes = 1 << 30
	}
	var (
		buf     []byte
		skipped int
	)
	for i, f := range zr.File {
		entry := f.Name
		if f.FileInfo().IsDir() || strings.HasSuffix(entry, "/") {
			skipped++
			continue
		}
		if !safePath(entry) {
			if entry == "" { // the report names every refused file
				entry = fmt.Sprintf("%s, entry %d (no name)", name, i+1)
			}
			rejected = append(rejected, Rejection{ShortName(entry), "unsafe path in the zip"})
			continue
		}
		if strings.HasPrefix(entry, "__MACOSX/") || strings.HasPrefix(path.Base(entry), ".") {
			skipped++
			continue
		}
		if lim.MaxExpanded > 0 && f.UncompressedSize64 <= uint64(lim.MaxImageBytes) &&
			expanded+int64(f.UncompressedSize64) > lim.MaxExpanded {
			rejected = append(rejected, Rejection{ShortName(entry), fmt.Sprintf(
				"the zip expands to more than %s: this file and the %s after it were not read", humanBytes(lim.MaxExpanded), plural(int64(len(zr.File)-i-1), "entry"))})
			break
		}
		if err := CheckFileName(entry); err != nil { // before reading it
			rejected = append(rejected, Rejection{ShortName(entry), err.Error()})
			continue
		}
		data, err := readEntry(f, lim.MaxImageBytes, buf)
		if err != nil {
			rejected = append(rejected, Rejection{ShortName(entry), err.Error()})
			continue
		}
		buf = data[:0]
		expanded += int64(len(data))
		var img Image
		if lim.Check != nil {
			img, err = lim.Check(entry, data)
		} else {
			img, err = Check(entry, data, lim.MaxImageBytes)
		}
		if err != nil {
			rejected = append(rejected, Rejection{ShortName(entry), err.Error()})
			continue
		}
		if err := CheckZipRatio(f); err != nil {
			rejected = append(rejected, Rejection{ShortName(entry), err.Error()})
			continue
		}
		images = append(images, img.Spooled(func() ([]byte, error) { return ReadEntry(f, lim.MaxImageBytes) }))
	}
	if len(images) == 0 && len(rejected) == 0 {
		reason := "the zip holds no files"
		if skipped > 0 {
			reason = "the zip holds no images (only folders and hidden files)"
		}
		rejected = append(rejected, Rejection{name, reason})
	}
	return images, rejected, expanded
}

// CheckZipRatio refuses an entry larger than zipRatioFloor that the zip
// compressed more than MaxZipRatio times (its sizes as the zip declares
// them, which archive/zip makes the data match); the error's text is the
// reason.
func CheckZipRatio(f *zip.File) error {
	size, packed := f.UncompressedSize64, f.CompressedSize64
	if size <= zipRatioFloor || packed >= size/MaxZipRatio {
		return nil
	}
	return fmt.Errorf("compressed %d-fold in the zip (%s to %s), more than an image's own compression leaves (%d-fold): it is mostly padding or uncompressed; save it again",
		size/max(packed, 1), humanBytes(int64(min(size, 1<<62))), humanBytes(int64(packed)), MaxZipRatio)
}

// safePath reports whether a zip entry name stays inside the archive.
func safePath(name string) bool {
	if name == "" || strings.Contains(name, "\\") || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return false
	}
	return filepath.IsLocal(filepath.FromSlash(name)) && !strings.Contains("/"+name+"/", "/../")
}
