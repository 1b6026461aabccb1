// Package media checks uploaded item images: it detects the format from the
// content (not the file name), walks the file's structure to its end
// (refusing bytes after it), bounds the pixel count and the memory a decode
// needs by reading the header only, decodes the image fully, hashes the
// bytes, and reads zip archives with bounded memory. Every rejected file
// gets a reason in words.
package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"path"
	"runtime"
	"strings"

	"golang.org/x/image/webp"

	"github.com/closer-lab/closer/internal/format"
)

// MaxPixels bounds an image's width × height (read from its header, before
// anything is decoded): 24 megapixels, a 6000×4000 photograph. Item images
// are shown side by side in a browser; larger ones only cost memory.
const MaxPixels = 24_000_000

// MaxDecodeBytes bounds the memory that decoding one image may need,
// estimated from its header (a 16-bit PNG or a progressive JPEG needs
// several bytes per pixel). Decodes of all requests share this budget, so
// concurrent uploads wait for each other instead of adding up.
const MaxDecodeBytes = 128 << 20

// MaxGIFFrames bounds an animated GIF's frames (each costs memory of its
// own, however small).
const MaxGIFFrames = 1000

// MaxMetadataBytes bounds the bytes of an image's blocks that hold no
// pixels (PNG ancillary chunks, JPEG APP and comment segments, GIF
// comment and application blocks, WebP Exif/XMP/ICC chunks). A camera's
// Exif, an ICC profile and XMP take tens to hundreds of KiB; megabytes of
// them are padding that a zip compresses to nothing and the database would
// store in full. Such an image is refused with the reason (stripping the
// blocks would change its bytes and its hash).
const MaxMetadataBytes = 1 << 20

// MaxJPEGScans bounds a JPEG's scans: a progressive JPEG's decoder passes
// over the whole image once per scan (encoders write about ten).
const MaxJPEGScans = 100

// Image is one accepted item image.
type Image struct {
	Name        string // the file name as uploaded (path inside a zip)
	Label       string // the base name without extension
	ContentType string // image/png, image/jpeg, image/gif or image/webp
	SHA256      string // hex
	Width       int
	Height      int
	Size        int64 // bytes
	// Sound marks an audio item (made by Sound, its type found by
	// avfile's probe, which this package cannot call: avfile imports it);
	// Width and Height are then 0.
	Sound bool
	// Video marks a video item (made by Video, its type, width and height
	// found by avfile's probe).
	Video bool
	// Data holds the bytes when they are kept in memory; an image read
	// from a spooled upload leaves it nil and Bytes reads them again.
	Data    []byte
	load    func() ([]byte, error)
	checked bool // made by Check
}

// Checked reports whether im was made by Check (a zero Image, or one
// built by hand, was not): stores refuse images that were not checked.
func (im Image) Checked() bool { return im.checked }

// Bytes returns the image's bytes: Data, or the bytes read again from where
// the upload was spooled, checked against SHA256.
func (im Image) Bytes() ([]byte, error) {
	if im.Data != nil || im.load == nil {
		return im.Data, nil
	}
	data, err := im.load()
	if err != nil {
		return nil, fmt.Errorf("read %s again: %w", im.Name, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != im.SHA256 {
		return nil, fmt.Errorf("read %s again: the bytes changed since they were checked", im.Name)
	}
	return data, nil
}

// Spooled returns im without its bytes in memory: Bytes calls load to read
// them again when they are needed.
func (im Image) Spooled(load func() ([]byte, error)) Image {
	im.Data, im.load = nil, load
	return im
}

// Sound returns data as an audio item whose content type a probe of its
// content found (avfile.ProbeAudio; the caller's job, as this package
// cannot import avfile): its label and hash. It is not Checked: a store
// probes a sound's bytes again before keeping them. The error's text is
// the reason.
func Sound(name string, data []byte, contentType string) (Image, error) {
	if err := CheckFileName(name); err != nil {
		return Image{}, err
	}
	return played(name, data, contentType)
}

// Video returns data as a video item (issue 29) whose content type and
// picture size a probe of its content found (avfile.ProbeVideo, the
// caller's, as for Sound): not Checked, a store probes it again. The
// error's text is the reason.
func Video(name string, data []byte, contentType string, width, height int) (Image, error) {
	if err := CheckFileName(name); err != nil {
		return Image{}, err
	}
	im, err := played(name, data, contentType)
	if err != nil {
		return Image{}, err
	}
	im.Sound, im.Video, im.Width, im.Height = false, true, width, height
	return im, nil
}

// played is a sound item of data, after its name was checked.
func played(name string, data []byte, contentType string) (Image, error) {
	if len(data) == 0 {
		return Image{}, errors.New("empty file")
	}
	sum := sha256.Sum256(data)
	return Image{Name: name, Label: Label(name), ContentType: contentType, SHA256: hex.EncodeToString(sum[:]),
		Size: int64(len(data)), Data: data, Sound: true}, nil
}

// Rejection names a file that was not accepted and why.
type Rejection struct {
	Name   string
	Reason string
}

func (r Rejection) String() string { return r.Name + ": " + r.Reason }

// formats maps the content types closer accepts to their names and the
// file extension used when serving them.
var formats = map[string]struct{ name, ext string }{
	"image/png":  {"PNG", "png"},
	"image/jpeg": {"JPEG", "jpg"},
	"image/gif":  {"GIF", "gif"},
	"image/webp": {"WebP", "webp"},
}

// Sniff returns the content type of data when its first bytes are those of
// a PNG, JPEG, GIF or WebP file, and the file extension that goes with it;
// ok is false for anything else. It reads the magic bytes only: it is how
// the server derives the type of stored bytes when it serves them.
func Sniff(data []byte) (contentType, ext string, ok bool) {
	ct := http.DetectContentType(data)
	f, ok := formats[ct]
	if !ok {
		return "", "", false
	}
	return ct, f.ext, true
}

// Check accepts data as an item image if its name makes a label of at most
// MaxLabelChars (CheckFileName) and it is a whole PNG, JPEG, GIF or WebP
// image no larger than maxBytes (0: no limit), with nothing after the
// image's end, at most MaxMetadataBytes of metadata, at most MaxPixels
// pixels and a decode that fits in MaxDecodeBytes; the image is then
// decoded in full. The error's text is the reason, fit to show next to the
// file name.
func Check(name string, data []byte, maxBytes int64) (Image, error) {
	if err := CheckFileName(name); err != nil {
		return Image{}, err
	}
	if len(data) == 0 {
		return Image{}, errors.New("empty file")
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return Image{}, errors.New(TooLarge(int64(len(data)), maxBytes))
	}
	ct, _, ok := Sniff(data)
	if !ok {
		return Image{}, notAnImage(data)
	}
	format := formats[ct].name
	cfg, err := decodeConfig(ct, data)
	if err != nil {
		return Image{}, fmt.Errorf("not a readable %s image: %v", format, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Image{}, fmt.Errorf("the %s image has no pixels (%d×%d)", format, cfg.Width, cfg.Height)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxPixels {
		return Image{}, fmt.Errorf("too many pixels: %d×%d is %s, the limit is %s: scale it down",
			cfg.Width, cfg.Height, megapixels(px), megapixels(MaxPixels))
	}
	st, err := walk(ct, data, cfg)
	if err != nil {
		return Image{}, fmt.Errorf("not a readable %s image: %v", format, err)
	}
	if st.frames > MaxGIFFrames {
		return Image{}, fmt.Errorf("an animated GIF of %s, the limit is %s", plural(int64(st.frames), "frame"), plural(MaxGIFFrames, "frame"))
	}
	if st.scans > MaxJPEGScans {
		// Each scan of a progressive JPEG passes over the whole image again.
		return Image{}, fmt.Errorf("a JPEG of %s, the limit is %d: save it again", plural(int64(st.scans), "scan"), MaxJPEGScans)
	}
	if st.framePixels > MaxPixels {
		return Image{}, fmt.Errorf("too many pixels: %d frames of %s in all, the limit is %s: use fewer or smaller frames",
			st.frames, megapixels(st.framePixels), megapixels(MaxPixels))
	}
	if st.metaBytes > MaxMetadataBytes {
		return Image{}, fmt.Errorf("%s of %s in the %s image, the limit is %s: save it again without them",
			humanBytes(st.metaBytes), st.metaKind, format, humanBytes(MaxMetadataBytes))
	}
	if st.end < len(data) {
		return Image{}, fmt.Errorf("%s after the end of the %s image: save it again without them", plural(int64(len(data)-st.end), "byte"), format)
	}
	if st.decodeBytes > MaxDecodeBytes {
		return Image{}, fmt.Errorf("decoding this %d×%d %s needs about %s, the limit is %s: scale it down%s",
			cfg.Width, cfg.Height, st.kind, humanBytes(st.decodeBytes), humanBytes(MaxDecodeBytes), st.hint)
	}
	got, err := decode(ct, data, min(st.decodeBytes+st.extraBytes, MaxDecodeBytes))
	if err != nil {
		return Image{}, fmt.Errorf("not a readable %s image: %v", format, err)
	}
	if got.Width != cfg.Width || got.Height != cfg.Height {
		return Image{}, fmt.Errorf("not a readable %s image: the header says %d×%d, the pixels are %d×%d", format, cfg.Width, cfg.Height, got.Width, got.Height)
	}
	sum := sha256.Sum256(data)
	return Image{
		Name:        name,
		Label:       Label(name),
		ContentType: ct,
		SHA256:      hex.EncodeToString(sum[:]),
		Width:       cfg.Width,
		Height:      cfg.Height,
		Size:        int64(len(data)),
		Data:        data,
		checked:     true,
	}, nil
}

// decodeConfig reads the image's header only.
func decodeConfig(ct string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch ct {
	case "image/png":
		return png.DecodeConfig(r)
	case "image/jpeg":
		return jpeg.DecodeConfig(r)
	case "image/gif":
		return gif.DecodeConfig(r)
	case "image/webp":
		return webp.DecodeConfig(r)
	}
	return image.Config{}, errors.New("unknown format")
}

// bigDecode is the size of a decode after which the garbage collector runs
// before the budget is given back.
const bigDecode = 16 << 20

// decode decodes data in full (every frame of a GIF), holding need bytes
// of the shared decode budget, and returns the decoded size. After a big
// decode it collects the garbage at once: otherwise the collector's target
// (twice the live heap) lets the next decode allocate beside the last one's
// pixels, and the budget would not bound the process's memory.
func decode(ct string, data []byte, need int64) (image.Config, error) {
	decodeBudget.acquire(need)
	defer decodeBudget.release(need)
	cfg, err := decodeAll(ct, data)
	if need >= bigDecode {
		runtime.GC()
	}
	return cfg, err
}

func decodeAll(ct string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	var m image.Image
	var err error
	switch ct {
	case "image/png":
		m, err = png.Decode(r)
	case "image/jpeg":
		m, err = jpeg.Decode(r)
	case "image/webp":
		m, err = webp.Decode(r)
	case "image/gif":
		var g *gif.GIF
		if g, err = gif.DecodeAll(r); err == nil {
			return g.Config, nil
		}
	}
	if err != nil {
		return image.Config{}, err
	}
	b := m.Bounds()
	return image.Config{ColorModel: m.ColorModel(), Width: b.Dx(), Height: b.Dy()}, nil
}

// notAnImage says what data looks like instead.
func notAnImage(data []byte) error {
	head := data[:min(len(data), 1024)]
	if bytes.Contains(bytes.ToLower(head), []byte("<svg")) {
		return errors.New("an SVG drawing, which is not accepted (it can carry scripts): convert it to PNG")
	}
	ct := strings.SplitN(http.DetectContentType(data), ";", 2)[0]
	return fmt.Errorf("not an image (content looks like %s; PNG, JPEG, GIF or WebP expected)", ct)
}

// TooLarge says that a file of size bytes is over limit, with figures that
// differ even when both round to the same number of MiB.
func TooLarge(size, limit int64) string {
	s, l := humanBytes(size), humanBytes(limit)
	if s == l {
		s, l = plural(size, "byte"), plural(limit, "byte")
	}
	return fmt.Sprintf("too large (%s, the limit is %s)", s, l)
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
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return plural(n, "byte")
	}
}

// HumanBytes formats a size for messages (1.5 MiB, 200 bytes).
func HumanBytes(n int64) string { return humanBytes(n) }

func megapixels(px int64) string {
	mp := float64(px) / 1e6
	if mp == float64(int64(mp)) {
		return fmt.Sprintf("%d megapixels", int64(mp))
	}
	return fmt.Sprintf("%.1f megapixels", mp)
}

// plural writes n with a thousands separator and the noun in the right number.
func plural(n int64, noun string) string {
	switch {
	case n == 1:
	case strings.HasSuffix(noun, "y"):
		noun = noun[:len(noun)-1] + "ies"
	default:
		noun += "s"
	}
	return format.Thousands(n) + " " + noun
}
