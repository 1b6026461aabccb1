package media

import (
	"archive/zip"
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/media/mediatest"
)

// TestCheckBoundsLabels: the probe stored a 70,000-character label from a
// file name. A name whose label is over MaxLabelChars characters, or a
// path over MaxFileNameBytes, is refused with the reason; 200 characters
// (of any script) are a label.
func TestCheckBoundsLabels(t *testing.T) {
	t.Parallel()
	png := mediatest.SmallPNG(1)
	for _, c := range []struct {
		name, reason string
	}{
		{strings.Repeat("x", 70000) + ".png", "the file name makes a label of 70,000 characters, the limit is 200 characters: rename the file"},
		{strings.Repeat("é", 201) + ".png", "the file name makes a label of 201 characters, the limit is 200 characters"},
		{strings.Repeat("d/", 600) + "a.png", "a file name of 1,205 bytes, the limit is 1,024 bytes"},
	} {
		if _, err := Check(c.name, png, 0); err == nil || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%.20s…: %v, want %q", c.name, err, c.reason)
		}
	}
	im, err := Check(strings.Repeat("é", 200)+".png", png, 0)
	if err != nil || im.Label != strings.Repeat("é", 200) {
		t.Fatalf("a 200-character label: %v", err)
	}
	if err := CheckLabel(strings.Repeat("x", 201)); err == nil || err.Error() != "a label of 201 characters, the limit is 200 characters" {
		t.Fatal(err)
	}
	// A zip entry (names of at most 65,535 bytes): refused unread, its
	// name shortened in the report.
	long := strings.Repeat("y", 65000) + ".png"
	z := mediatest.Zip([2]string{long, string(png)}, [2]string{"ok.png", string(mediatest.SmallPNG(2))})
	imgs, rej, _ := ReadZip("z.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxImageBytes: 1 << 20})
	if len(imgs) != 1 || len(rej) != 1 || len(rej[0].Name) > 200 || !strings.HasPrefix(rej[0].Name, "yyyy") ||
		!strings.HasPrefix(rej[0].Reason, "the file name makes a label of 65,000 characters") {
		t.Fatalf("%d images, %v", len(imgs), rej)
	}
}

// withAPPSegments is jpg with n APP1 segments of 65,533 zero bytes after
// its start-of-image marker.
func withAPPSegments(jpg []byte, n int) []byte {
	out := append([]byte{}, jpg[:2]...)
	for range n {
		out = append(out, 0xFF, 0xE1, 0xFF, 0xFF)
		out = append(out, make([]byte, 0xFFFF-2)...)
	}
	return append(out, jpg[2:]...)
}

// withComment is gif with a comment extension of n zero bytes before its
// trailer.
func withComment(gf []byte, n int) []byte {
	out := append([]byte{}, gf[:len(gf)-1]...)
	out = append(out, 0x21, 0xFE)
	for ; n > 0; n -= 255 {
		k := min(n, 255)
		out = append(out, byte(k))
		out = append(out, make([]byte, k)...)
	}
	return append(out, 0, 0x3B)
}

// TestCheckBoundsMetadata: an image whose blocks without pixels (PNG
// ancillary chunks, JPEG APP segments, GIF comments) exceed
// MaxMetadataBytes is refused with the reason; 512 KiB of them pass.
func TestCheckBoundsMetadata(t *testing.T) {
	t.Parallel()
	jpg := encode(t, "jpeg", 8, 8)
	gf := encode(t, "gif", 4, 4)
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
	}{
		{"a.png", mediatest.AncillaryPNG(10<<20, 1), "10.0 MiB of ancillary chunks (text, profiles, private data) in the PNG image, the limit is 1.0 MiB: save it again without them"},
		{"a.jpg", withAPPSegments(jpg, 20), "1.3 MiB of APP and comment segments (Exif, profiles, XMP, comments) in the JPEG image, the limit is 1.0 MiB"},
		{"a.gif", withComment(gf, 2<<20), "2.0 MiB of extension blocks (comments, application data) in the GIF image, the limit is 1.0 MiB"},
	} {
		if _, err := Check(c.name, c.data, 20<<20); err == nil || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%s: %v, want %q", c.name, err, c.reason)
		}
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"a.png", mediatest.AncillaryPNG(512<<10, 1)},
		{"a.jpg", withAPPSegments(jpg, 8)},
		{"a.gif", withComment(gf, 512<<10)},
	} {
		if _, err := Check(c.name, c.data, 20<<20); err != nil {
			t.Errorf("%s with 512 KiB of metadata: %v", c.name, err)
		}
	}
}

// TestReadZipBoundsCompression: the probe's zip of 100 PNGs with 10 MiB
// ancillary chunks each (about 1 MB, 1 GB unpacked) stores nothing, and a
// valid image that the zip compressed more than MaxZipRatio times (an
// uncompressed PNG of one colour) is refused with the ratio; a real image
// (noise) of the same size is accepted.
func TestReadZipBoundsCompression(t *testing.T) {
	t.Parallel()
	z := mediatest.RepeatZip(100, mediatest.AncillaryPNG(10<<20, 1))
	if len(z) > 2<<20 {
		t.Fatalf("the bomb is %d bytes", len(z))
	}
	imgs, rej, _ := ReadZip("bomb.zip", bytes.NewReader(z), int64(len(z)), ZipLimits{MaxImageBytes: 11 << 20})
	if len(imgs) != 0 || len(rej) != 100 || !strings.Contains(rej[0].Reason, "of ancillary chunks") {
		t.Fatalf("%d images stored, %d rejected: %v", len(imgs), len(rej), rej[:1])
	}

	var flat bytes.Buffer
	(&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&flat, image.NewNRGBA(image.Rect(0, 0, 700, 700)))
	noise := mediatest.NoisePNG(700, 700, 1)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string][]byte{"flat.png": flat.Bytes(), "noise.png": noise} {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	zw.Close()
	imgs, rej, _ = ReadZip("z.zip", bytes.NewReader(buf.Bytes()), int64(buf.Len()), ZipLimits{MaxImageBytes: 10 << 20})
	if len(imgs) != 1 || imgs[0].Name != "noise.png" || len(rej) != 1 || rej[0].Name != "flat.png" ||
		!strings.Contains(rej[0].Reason, "more than an image's own compression leaves (10-fold)") {
		t.Fatalf("%d images, %v", len(imgs), rej)
	}
}
