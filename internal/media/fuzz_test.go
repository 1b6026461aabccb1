package media

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"runtime/metrics"
	"testing"

	"github.com/closer-lab/closer/internal/fuzzcorpus"
)

// heapAllocated is the bytes allocated on the heap so far by the process.
func heapAllocated() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// checkSeeds are compact versions of the attacks on the image checker
// (committed under testdata/fuzz/FuzzCheck by TestFuzzSeedsCommitted).
func checkSeeds(t testing.TB) map[string][]byte {
	small := smallPNG()
	return map[string][]byte{
		"png":             small,
		"jpeg":            encode(t, "jpeg", 8, 8),
		"gif":             encode(t, "gif", 4, 4),
		"webp":            mustWebP(t),
		"padded-png":      paddedPNG(2048),
		"huge-header-png": hugeHeaderPNG(),
		"zlib-bomb-png":   zlibBombPNG(false),
		"deep-png-header": rawPNG(5000, 4000, 16, 6, 1<<10),
		"progressive-jpeg-header": {0xFF, 0xD8, 0xFF, 0xC2, 0, 17, 8, 0x0F, 0xA0, 0x17, 0x70, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
			0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0, 0, 0x12, 0x34, 0xFF, 0xD9},
		"png-then-html": append(small, []byte("<html><script>alert(1)</script></html>")...),
		"svg":           []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`),
		"html":          []byte("<!DOCTYPE html><script>fetch('/admin/account/tokens',{method:'POST'})</script>"),
	}
}

// FuzzCheck: whatever the bytes, Check does not panic, allocates no more
// than the header lets it (a few MiB when it refuses before decoding), and
// what it accepts is an image of an allowed type, derived again from the
// bytes, within the pixel limit, hashed correctly, and accepted again.
func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		bound := int64(4<<20) + 4*int64(len(data))
		if ct, _, ok := Sniff(data); ok {
			if cfg, err := decodeConfig(ct, data); err == nil && int64(cfg.Width)*int64(cfg.Height) <= MaxPixels {
				if st, err := walk(ct, data, cfg); err == nil && st.decodeBytes <= MaxDecodeBytes {
					bound += st.decodeBytes + st.extraBytes
				}
			}
		}
		before := heapAllocated()
		img, err := Check("fuzz.png", data, 1<<20)
		if got := heapAllocated() - before; got > bound {
			t.Fatalf("Check allocated %d bytes, the bound is %d (err %v)", got, bound, err)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		ct, _, ok := Sniff(data)
		if !ok || ct != img.ContentType || !img.Checked() {
			t.Fatalf("accepted as %q, the bytes say %q", img.ContentType, ct)
		}
		if px := int64(img.Width) * int64(img.Height); img.Width <= 0 || img.Height <= 0 || px > MaxPixels {
			t.Fatalf("accepted %d×%d", img.Width, img.Height)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != img.SHA256 || img.Size != int64(len(data)) {
			t.Fatal("hash or size is not the bytes'")
		}
		again, err := Check("again", img.Data, 1<<20)
		if err != nil || again.ContentType != img.ContentType || again.Width != img.Width || again.Height != img.Height || again.SHA256 != img.SHA256 {
			t.Fatalf("accepted once, then %v", err)
		}
	})
}

// zipSeeds are compact versions of the attacks on the zip reader.
func zipSeeds(t testing.TB) map[string][]byte {
	zipOf := func(entries ...[2]string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, e := range entries {
			w, err := zw.Create(e[0])
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(e[1]))
		}
		zw.Close()
		return buf.Bytes()
	}
	small := string(smallPNG())
	return map[string][]byte{
		"empty-zip":       zipOf(),
		"one-png":         zipOf([2]string{"a/b.png", small}),
		"folders-only":    zipOf([2]string{"a/", ""}, [2]string{"__MACOSX/._x.png", "junk"}, [2]string{".DS_Store", "x"}),
		"escape":          zipOf([2]string{"../escape.png", small}, [2]string{"/abs.png", small}),
		"html-entry":      zipOf([2]string{"x.png", "<html><script>alert(1)</script>"}),
		"padded-entries":  paddedZip(5, 4096),
		"too-many":        zipOf([2]string{"1", ""}, [2]string{"2", ""}, [2]string{"3", ""}, [2]string{"4", ""}, [2]string{"5", ""}, [2]string{"6", ""}, [2]string{"7", ""}, [2]string{"8", ""}, [2]string{"9", ""}),
		"deflate-bomb":    zipOf([2]string{"zeros.png", string(make([]byte, 1<<20))}),
		"truncated":       zipOf([2]string{"a.png", small})[:60],
		"not-a-zip":       []byte("PK\x03\x04 but nothing else"),
		"zlib-bomb-entry": zipOf([2]string{"bomb.png", string(zlibBombPNG(false))}),
	}
}

// FuzzReadZip: whatever the archive, ReadZip does not panic, reads its
// table of contents with memory bounded by the entry limit, unpacks no
// more than its limits, and every image it accepts has a safe name and
// checks again from the bytes it reads back.
func FuzzReadZip(f *testing.F) {
	lim := ZipLimits{MaxImageBytes: 64 << 10, MaxEntries: 8, MaxExpanded: 256 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := heapAllocated()
		zr, err := OpenZip(bytes.NewReader(data), int64(len(data)), lim.MaxEntries)
		if got := heapAllocated() - before; got > 2<<20 {
			t.Fatalf("reading the table of contents allocated %d bytes", got)
		}
		if err == nil && len(zr.File) > lim.MaxEntries {
			t.Fatalf("opened with %d entries", len(zr.File))
		}
		imgs, rej, expanded := ReadZip("fuzz.zip", bytes.NewReader(data), int64(len(data)), lim)
		if expanded > lim.MaxExpanded {
			t.Fatalf("expanded %d bytes", expanded)
		}
		if len(imgs)+len(rej) > lim.MaxEntries+1 || len(imgs)+len(rej) == 0 {
			t.Fatalf("%d images and %d rejections", len(imgs), len(rej))
		}
		for _, r := range rej {
			if r.Name == "" || r.Reason == "" {
				t.Fatalf("rejection %+v", r)
			}
		}
		for _, im := range imgs {
			if !safePath(im.Name) || im.Data != nil {
				t.Fatalf("accepted %q (data kept: %v)", im.Name, im.Data != nil)
			}
			b, err := im.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Check(im.Name, b, lim.MaxImageBytes)
			if err != nil || again.SHA256 != im.SHA256 || again.ContentType != im.ContentType {
				t.Fatalf("%s accepted, then %v", im.Name, err)
			}
		}
	})
}

// TestFuzzSeedsCommitted keeps testdata/fuzz in step with the seeds above
// (go test -run FuzzSeeds -update-corpus rewrites the files).
func TestFuzzSeedsCommitted(t *testing.T) {
	t.Parallel()
	fuzzcorpus.Check(t, "FuzzCheck", checkSeeds(t))
	fuzzcorpus.Check(t, "FuzzReadZip", zipSeeds(t))
}
