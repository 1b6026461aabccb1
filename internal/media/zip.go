package media

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// Limits on a zip upload as a whole, so a small archive cannot expand into
// an unbounded amount of memory.
const (
	maxZipEntries    = 20000
	maxZipExpandedMB = 1024
)

// ReadZip reads every file of a zip archive and checks it with Check.
// Directories, macOS resource forks (__MACOSX/) and hidden files are
// skipped silently; entries with unsafe paths (absolute, or leaving the
// archive with ..) are rejected without being read. If the archive itself
// cannot be read, the single rejection names it.
func ReadZip(r io.ReaderAt, size int64, maxBytes int64) ([]Image, []Rejection) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, []Rejection{{Name: "archive", Reason: "not a readable zip file: " + err.Error()}}
	}
	if len(zr.File) > maxZipEntries {
		return nil, []Rejection{{Name: "archive", Reason: fmt.Sprintf("too many files (%d, the limit is %d)", len(zr.File), maxZipEntries)}}
	}
	var (
		images   []Image
		rejected []Rejection
		expanded int64
	)
	for _, f := range zr.File {
		name := f.Name
		if f.FileInfo().IsDir() || strings.HasSuffix(name, "/") {
			continue
		}
		if !safePath(name) {
			rejected = append(rejected, Rejection{name, "unsafe path in the zip"})
			continue
		}
		base := path.Base(name)
		if strings.HasPrefix(name, "__MACOSX/") || strings.HasPrefix(base, ".") {
			continue
		}
		if maxBytes > 0 && f.UncompressedSize64 > uint64(maxBytes) {
			rejected = append(rejected, Rejection{name, fmt.Sprintf("too large (%s, the limit is %s)", humanBytes(int64(f.UncompressedSize64)), humanBytes(maxBytes))})
			continue
		}
		data, err := readEntry(f, maxBytes)
		if err != nil {
			rejected = append(rejected, Rejection{name, err.Error()})
			continue
		}
		expanded += int64(len(data))
		if expanded > maxZipExpandedMB<<20 {
			rejected = append(rejected, Rejection{name, fmt.Sprintf("archive expands to more than %d MiB; the rest was not read", maxZipExpandedMB)})
			break
		}
		img, err := Check(name, data, maxBytes)
		if err != nil {
			rejected = append(rejected, Rejection{name, err.Error()})
			continue
		}
		images = append(images, img)
	}
	return images, rejected
}

// readEntry reads one entry, trusting neither its declared size nor its
// compression ratio: at most maxBytes+1 bytes are read.
func readEntry(f *zip.File, maxBytes int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("cannot read from the zip: %v", err)
	}
	defer rc.Close()
	limit := int64(maxZipExpandedMB << 20)
	if maxBytes > 0 {
		limit = maxBytes
	}
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read from the zip: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("too large (more than %s)", humanBytes(limit))
	}
	return data, nil
}

// safePath reports whether a zip entry name stays inside the archive.
func safePath(name string) bool {
	if name == "" || strings.Contains(name, "\\") || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return false
	}
	return filepath.IsLocal(filepath.FromSlash(name)) && !strings.Contains("/"+name+"/", "/../")
}
