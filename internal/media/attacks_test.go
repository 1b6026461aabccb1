package media

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/media/mediatest"
)

var (
	rawPNG        = mediatest.RawPNG
	hugeHeaderPNG = mediatest.HugeHeaderPNG
	zlibBombPNG   = mediatest.ZlibBombPNG
	paddedPNG     = mediatest.PaddedPNG
)

func smallPNG() []byte { return mediatest.SmallPNG(10) }

// paddedZip is a zip of n entries, each a 2×2 PNG padded to entrySize.
var paddedZip = mediatest.PaddedZip

func TestCheckRefusesAttacks(t *testing.T) {
	t.Parallel()
	small := smallPNG()
	jpg := encode(t, "jpeg", 8, 8)
	gf := encode(t, "gif", 4, 4)
	webp := mustWebP(t)
	// A progressive 6000×4000 frame header and a scan header, no pixels.
	progressive := []byte{0xFF, 0xD8, 0xFF, 0xC2, 0, 17, 8, 0x0F, 0xA0, 0x17, 0x70, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
		0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0, 0, 0x12, 0x34, 0xFF, 0xD9}
	padded := paddedPNG(10 << 20)
	// A GIF of 1,001 one-pixel frames, and a JPEG of 101 empty scans.
	manyFrames := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00")
	for range 1001 {
		manyFrames = append(manyFrames, 0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0)
	}
	manyFrames = append(manyFrames, 0x3B)
	manyScans := append([]byte{}, progressive[:len(progressive)-2]...)
	for range 100 {
		manyScans = append(manyScans, 0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0, 0, 0x12)
	}
	manyScans = append(manyScans, 0xFF, 0xD9)
	cases := []struct {
		name   string
		data   []byte
		reason string
	}{
		{"padded.png", padded, plural(int64(len(padded)-len(small)), "byte") + " after the end of the PNG image: save it again without them"},
		{"huge.png", hugeHeaderPNG(), "too many pixels: 50000×50000 is 2500 megapixels, the limit is 24 megapixels"},
		{"bomb.png", zlibBombPNG(false), "too many pixels: 20000×20000 is 400 megapixels"},
		{"deep.png", rawPNG(5000, 4000, 16, 6, 1<<10), "decoding this 5000×4000 16-bit PNG needs about 152.7 MiB, the limit is 128.0 MiB: scale it down or save it with 8 bits per channel"},
		{"prog.jpg", progressive, "decoding this 6000×4000 progressive JPEG needs about 173.2 MiB, the limit is 128.0 MiB: scale it down or save it as a baseline (not progressive) JPEG"},
		{"frames.gif", manyFrames, "an animated GIF of 1,001 frames, the limit is 1,000 frames"},
		{"scans.jpg", manyScans, "a JPEG of 101 scans, the limit is 100: save it again"},
		{"polyglot.png", append(small, []byte("<html><script>alert(1)</script>")...), "31 bytes after the end of the PNG image"},
		{"tail.jpg", append(jpg, []byte("<script>")...), "8 bytes after the end of the JPEG image"},
		{"tail.gif", append(gf, 0, 0), "2 bytes after the end of the GIF image"},
		{"tail.webp", append(webp, 'x', 'y'), "2 bytes after the end of the WebP image"},
		{"cut.png", small[:len(small)-12], "not a readable PNG image: the file ends before the IEND chunk"},
		{"cut.jpg", jpg[:len(jpg)-2], "not a readable JPEG image"},
		{"page.png", []byte("<!DOCTYPE html><html><body><script>fetch('/admin')</script></body></html>"), "not an image (content looks like text/html"},
		{"drawing.svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "an SVG drawing, which is not accepted"},
		{"script.png", []byte("alert(document.cookie)"), "not an image (content looks like text/plain"},
		{"zero.png", rawPNG(0, 5, 8, 6, 10), "not a readable PNG image"},
	}
	for _, c := range cases {
		_, err := Check(c.name, c.data, 10<<20)
		if err == nil || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%s: got %v, want a reason starting %q", c.name, err, c.reason)
		}
	}
}

func TestCheckAcceptsWholeImages(t *testing.T) {
	t.Parallel()
	// A JPEG with extraneous bytes between segments (libjpeg accepts them),
	// an animated GIF and an image at the pixel limit pass.
	jpg := encode(t, "jpeg", 16, 16)
	second := 4 + int(jpg[4])<<8 + int(jpg[5]) // after the first segment
	withJunk := append(append(append([]byte{}, jpg[:second]...), 0x00, 0x11), jpg[second:]...)
	var anim bytes.Buffer
	pal := color.Palette{color.Black, color.White}
	g := &gif.GIF{}
	for range 3 {
		g.Image = append(g.Image, image.NewPaletted(image.Rect(0, 0, 5, 5), pal))
		g.Delay = append(g.Delay, 10)
	}
	if err := gif.EncodeAll(&anim, g); err != nil {
		t.Fatal(err)
	}
	atLimit := rawPNG(6000, 4000, 8, 0, 4000*(1+6000)) // 24 megapixels of grey
	for name, data := range map[string][]byte{"junk.jpg": withJunk, "anim.gif": anim.Bytes(), "limit.png": atLimit} {
		img, err := Check(name, data, 0)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !img.Checked() || img.Size != int64(len(data)) {
			t.Errorf("%s: %+v", name, img)
		}
	}
}

func TestTooLargeSaysTheRealSize(t *testing.T) {
	t.Parallel()
	if got := TooLarge(200<<20, 10<<20); got != "too large (200.0 MiB, the limit is 10.0 MiB)" {
		t.Errorf("got %q", got)
	}
	// Sizes that round alike are given in bytes.
	if got := TooLarge(10<<20+1, 10<<20); got != "too large (10,485,761 bytes, the limit is 10,485,760 bytes)" {
		t.Errorf("got %q", got)
	}
}

func TestSniffServesOnlyImages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data []byte
		ct   string
	}{
		{smallPNG(), "image/png"},
		{encode(t, "jpeg", 2, 2), "image/jpeg"},
		{encode(t, "gif", 2, 2), "image/gif"},
		{mustWebP(t), "image/webp"},
		{[]byte("<html><script>alert(1)</script>"), ""},
		{[]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), ""},
		{[]byte("%PDF-1.4"), ""},
	} {
		ct, _, ok := Sniff(c.data)
		if ct != c.ct || ok != (c.ct != "") {
			t.Errorf("Sniff(%.20q) = %q %v, want %q", c.data, ct, ok, c.ct)
		}
	}
}

func TestReadZipLimits(t *testing.T) {
	t.Parallel()
	// 100 entries of a 2×2 PNG padded to 1 MiB: all refused for their
	// trailing bytes, nothing kept.
	z := paddedZip(100, 1<<20)
	imgs, rej, expanded := ReadZip("bomb.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxImageBytes: 10 << 20})
	if len(imgs) != 0 || len(rej) != 100 || expanded != 100<<20 || !strings.Contains(rej[0].Reason, "after the end of the PNG image") {
		t.Fatalf("%d images, %d rejected (%v), %d bytes expanded", len(imgs), len(rej), rej[:1], expanded)
	}
	// The expansion limit stops reading.
	_, rej, expanded = ReadZip("bomb.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxImageBytes: 10 << 20, MaxExpanded: 5 << 20})
	last := rej[len(rej)-1]
	if expanded != 5<<20 || len(rej) != 6 || !strings.HasPrefix(last.Reason, "the zip expands to more than 5.0 MiB: this file and the 94 entries after it were not read") {
		t.Fatalf("expanded %d, rejected %d, last %v", expanded, len(rej), last)
	}
	// An entry over the image limit is refused by its declared size, unread.
	_, rej, expanded = ReadZip("bomb.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxImageBytes: 1 << 19})
	if expanded != 0 || rej[0].Reason != "too large (1.0 MiB, the limit is 512.0 KiB)" {
		t.Fatalf("expanded %d, %v", expanded, rej[0])
	}
	// Too many entries: counted from the table of contents...
	_, rej, _ = ReadZip("many.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxEntries: 99})
	if len(rej) != 1 || rej[0] != (Rejection{"many.zip", "the zip lists too many files (100 files, the limit is 99 files)"}) {
		t.Fatalf("%v", rej)
	}
	// ... and refused while the table is read when it is far too large.
	many := paddedZip(3000, 100)
	_, rej, _ = ReadZip("many.zip", bytes.NewReader(many), int64(len(many)), ZipLimits{MaxEntries: 10})
	if len(rej) != 1 || rej[0] != (Rejection{"many.zip", "the zip lists too many files (the limit is 10 files)"}) {
		t.Fatalf("%v", rej)
	}
}

// TestReadZipDefaultEntryLimit: with no MaxEntries the limit is
// MaxZipEntries (20,000), which the web's uploads use by default; 20,001
// entries are refused whole (the web's own tests set a smaller limit).
func TestReadZipDefaultEntryLimit(t *testing.T) {
	t.Parallel()
	entries := make([][2]string, MaxZipEntries+1)
	for i := range entries {
		entries[i] = [2]string{fmt.Sprintf("e%d.png", i), ""}
	}
	z := mediatest.Zip(entries...)
	_, rej, _ := ReadZip("many.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{})
	if len(rej) != 1 || rej[0] != (Rejection{"many.zip", "the zip lists too many files (20,001 files, the limit is 20,000 files)"}) {
		t.Fatalf("%.300v", rej)
	}
}

func TestReadZipEmpty(t *testing.T) {
	t.Parallel()
	zipOf := func(names ...string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			if _, err := zw.Create(n); err != nil {
				t.Fatal(err)
			}
		}
		zw.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		data   []byte
		reason string
	}{
		{zipOf(), "the zip holds no files"},
		{zipOf("photos/", "__MACOSX/._a.png", ".DS_Store"), "the zip holds no images (only folders and hidden files)"},
	} {
		if !IsZip(c.data) {
			t.Errorf("IsZip(%q) is false", c.data[:4])
		}
		_, rej, _ := ReadZip("e.zip", bytes.NewReader(c.data), int64(len(c.data)), ZipLimits{})
		if len(rej) != 1 || rej[0] != (Rejection{"e.zip", c.reason}) {
			t.Errorf("got %v, want %q", rej, c.reason)
		}
	}
}

func TestSpooledImageReadsAgain(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("a.png")
	w.Write(smallPNG())
	zw.Close()
	imgs, rej, _ := ReadZip("a.zip", bytes.NewReader(buf.Bytes()), int64(buf.Len()), ZipLimits{MaxImageBytes: 1 << 20})
	if len(imgs) != 1 || len(rej) != 0 || imgs[0].Data != nil {
		t.Fatalf("%v %v", imgs, rej)
	}
	data, err := imgs[0].Bytes()
	if err != nil || !bytes.Equal(data, smallPNG()) {
		t.Fatalf("%v", err)
	}
}

func mustWebP(t testing.TB) []byte {
	t.Helper()
	b, err := decodeBase64(webp1x1)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
