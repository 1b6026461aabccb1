// Package media checks uploaded item images: it detects the format from the
// content (not the file name), reads the dimensions, hashes the bytes, and
// reads zip archives safely. Every rejected file gets a reason in words.
package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"net/http"
	"path"
	"strings"

	_ "golang.org/x/image/webp" // registers WebP
)

// Image is one accepted item image.
type Image struct {
	Name        string // the file name as uploaded (path inside a zip)
	Label       string // the base name without extension
	ContentType string // image/png, image/jpeg, image/gif or image/webp
	Data        []byte
	SHA256      string // hex
	Width       int
	Height      int
}

// Rejection names a file that was not accepted and why.
type Rejection struct {
	Name   string
	Reason string
}

func (r Rejection) String() string { return r.Name + ": " + r.Reason }

// allowed lists the content types closer accepts and their decoder names.
var allowed = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpeg",
	"image/gif":  "gif",
	"image/webp": "webp",
}

// Check accepts data as an item image if it is a PNG, JPEG, GIF or WebP
// image no larger than maxBytes (0: no limit). The error's text is the
// reason, fit to show next to the file name.
func Check(name string, data []byte, maxBytes int64) (Image, error) {
	if len(data) == 0 {
		return Image{}, fmt.Errorf("empty file")
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return Image{}, fmt.Errorf("too large (%s, the limit is %s)", humanBytes(int64(len(data))), humanBytes(maxBytes))
	}
	ct := http.DetectContentType(data)
	format, ok := allowed[ct]
	if !ok {
		return Image{}, fmt.Errorf("not an image (content looks like %s; PNG, JPEG, GIF or WebP expected)", strings.SplitN(ct, ";", 2)[0])
	}
	cfg, decoded, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || decoded != format {
		return Image{}, fmt.Errorf("not a readable %s image", strings.ToUpper(format))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Image{}, fmt.Errorf("image has no pixels (%d×%d)", cfg.Width, cfg.Height)
	}
	sum := sha256.Sum256(data)
	return Image{
		Name:        name,
		Label:       Label(name),
		ContentType: ct,
		Data:        data,
		SHA256:      hex.EncodeToString(sum[:]),
		Width:       cfg.Width,
		Height:      cfg.Height,
	}, nil
}

// Label returns the file's base name without its extension.
func Label(name string) string {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
