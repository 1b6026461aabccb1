package media

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

func testImage(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(x), uint8(y), 100, 255})
		}
	}
	return m
}

func encode(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, testImage(w, h))
	case "jpeg":
		err = jpeg.Encode(&buf, testImage(w, h), nil)
	case "gif":
		err = gif.Encode(&buf, testImage(w, h), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A 1×1 lossless WebP (a widely used minimal sample).
const webp1x1 = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func TestCheckFormatsFromContent(t *testing.T) {
	t.Parallel()
	webp, err := base64.StdEncoding.DecodeString(webp1x1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ct string
		data     []byte
		w, h     int
	}{
		{"a.png", "image/png", encode(t, "png", 7, 5), 7, 5},
		{"b.jpg", "image/jpeg", encode(t, "jpeg", 8, 3), 8, 3},
		{"c.gif", "image/gif", encode(t, "gif", 4, 9), 4, 9},
		{"d.webp", "image/webp", webp, 1, 1},
		// The extension lies; the content decides.
		{"really-a-png.jpg", "image/png", encode(t, "png", 2, 2), 2, 2},
	}
	for _, c := range cases {
		img, err := Check(c.name, c.data, 0)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if img.ContentType != c.ct || img.Width != c.w || img.Height != c.h {
			t.Errorf("%s: got %s %d×%d, want %s %d×%d", c.name, img.ContentType, img.Width, img.Height, c.ct, c.w, c.h)
		}
		if len(img.SHA256) != 64 {
			t.Errorf("%s: sha256 %q", c.name, img.SHA256)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	t.Parallel()
	png := encode(t, "png", 10, 10)
	cases := []struct {
		name   string
		data   []byte
		max    int64
		reason string
	}{
		{"empty.png", nil, 0, "empty file"},
		{"notes.png", []byte("hello, this is text"), 0, "not an image"},
		{"big.png", png, 10, "too large"},
		{"broken.png", png[:30], 0, "not a readable PNG"},
	}
	for _, c := range cases {
		_, err := Check(c.name, c.data, c.max)
		if err == nil || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%s: got %v, want a reason starting %q", c.name, err, c.reason)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"img_01.png":         "img_01",
		"dir/sub/cat.v2.JPG": "cat.v2",
		"noext":              "noext",
		".hidden":            ".hidden",
	} {
		if got := Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadZip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	add("fruits/img10.png", encode(t, "png", 3, 3))
	add("fruits/img2.png", encode(t, "png", 4, 4))
	add("fruits/", nil)
	add("__MACOSX/fruits/._img2.png", []byte("resource fork"))
	add("fruits/.DS_Store", []byte("junk"))
	add("../escape.png", encode(t, "png", 2, 2))
	add("fruits/readme.txt", []byte("not an image at all"))
	add("fruits/empty.gif", nil)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	images, rejected, _ := ReadZip("fruits.zip", bytes.NewReader(buf.Bytes()), int64(buf.Len()), ZipLimits{MaxImageBytes: 1 << 20})
	SortNatural(images)
	var names []string
	for _, im := range images {
		names = append(names, im.Name)
	}
	if got := strings.Join(names, ","); got != "fruits/img2.png,fruits/img10.png" {
		t.Errorf("accepted %s", got)
	}
	want := map[string]string{
		"../escape.png":     "unsafe path in the zip",
		"fruits/readme.txt": "not an image",
		"fruits/empty.gif":  "empty file",
	}
	if len(rejected) != len(want) {
		t.Errorf("rejected %v, want %d", rejected, len(want))
	}
	for _, r := range rejected {
		if w, ok := want[r.Name]; !ok || !strings.HasPrefix(r.Reason, w) {
			t.Errorf("rejection %s: want reason %q", r, w)
		}
	}
}

func TestReadZipNotAZip(t *testing.T) {
	t.Parallel()
	_, rejected, _ := ReadZip("plain.zip", bytes.NewReader([]byte("plain text")), 10, ZipLimits{})
	if len(rejected) != 1 || !strings.Contains(rejected[0].Reason, "not a readable zip") {
		t.Errorf("got %v", rejected)
	}
}

func TestCompareNatural(t *testing.T) {
	t.Parallel()
	ordered := []string{"a1", "A2", "a10", "a10b", "a011x", "b", "img-2.png", "img-10.png"}
	for i := range ordered {
		for j := range ordered {
			got := CompareNatural(ordered[i], ordered[j])
			want := cmpInt(i, j)
			if got != want {
				t.Errorf("CompareNatural(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
