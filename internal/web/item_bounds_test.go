package web_test

import (
	"bytes"
	"html"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

// TestUploadBoundsLabels: the probe's 70,000-character label came from a
// file name. An upload naming such a file (on its own or in a zip) answers
// with the redirect to the study page, whose report names the file and the
// reason; the file is not stored, the good one is.
func TestUploadBoundsLabels(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("lab", 0, 3, study.StatusDraft)
	c := a.admin()
	long := strings.Repeat("x", 70000)
	res := upload(t, a, c, "lab", [][2]string{
		{long + ".png", string(mediatest.SmallPNG(1))},
		{"set.zip", string(mediatest.Zip([2]string{strings.Repeat("z", 65000) + ".png", string(mediatest.SmallPNG(2))}))},
		{"ok.png", string(mediatest.SmallPNG(3))},
	})
	body := html.UnescapeString(res.body)
	for _, want := range []string{
		"the file name makes a label of 70,000 characters, the limit is 200 characters: rename the file",
		"the file name makes a label of 65,000 characters, the limit is 200 characters: rename the file",
		"1 added, 2 rejected",
	} {
		if res.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("%d: the report lacks %q", res.StatusCode, want)
		}
	}
	if n := a.count(`SELECT count(*) FROM items WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d items stored, want ok.png", n)
	}
	if n := a.count(`SELECT max(char_length(label)) FROM items`); n > 200 {
		t.Fatalf("a label of %d characters was stored", n)
	}
}

// TestUploadBoundsStoredBytes: the bytes one upload stores and the bytes a
// study holds are bounded (ItemLimits); images past either bound are named
// in the report with the bound, the others stored. The probe's zip (100
// PNGs with 10 MiB ancillary chunks, about 1 MB) and a zip of images that
// it compressed more than tenfold store nothing.
func TestUploadBoundsStoredBytes(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, web.Config{ItemLimits: store.ItemLimits{MaxUploadBytes: 2 << 20, MaxStudyBytes: 3 << 20}})
	st := a.study("cap", 0, 3, study.StatusDraft)
	c := a.admin()
	stored := func() int {
		return a.count(`SELECT coalesce(sum(octet_length(data)), 0)::int FROM items WHERE study_id = $1`, st.ID)
	}
	noise := func(seed uint64) string { return string(mediatest.NoisePNG(520, 520, seed)) } // 0.78 MiB
	res := upload(t, a, c, "cap", [][2]string{{"n1.png", noise(1)}, {"n2.png", noise(2)}, {"n3.png", noise(3)}})
	body := html.UnescapeString(res.body)
	if !strings.Contains(body, "<strong>n3.png</strong>: the upload would store more than 2.0 MiB of images (the limit of one upload)") ||
		!strings.Contains(body, "2 added, 1 rejected") {
		t.Fatalf("%d %.3000s", res.StatusCode, body)
	}
	res = upload(t, a, c, "cap", [][2]string{{"n4.png", noise(4)}, {"n5.png", noise(5)}})
	body = html.UnescapeString(res.body)
	if !strings.Contains(body, "<strong>n5.png</strong>: the study's images would take more than 3.0 MiB (the limit of a study; it holds 2.3 MiB): not added") ||
		!strings.Contains(body, "1 added, 1 rejected") {
		t.Fatalf("%d %.3000s", res.StatusCode, body)
	}
	if got := stored(); got > 3<<20 {
		t.Fatalf("the study stores %d bytes", got)
	}
	// A zip is not unpacked past what one upload may store.
	a.study("zip", 0, 3, study.StatusDraft)
	res = upload(t, a, c, "zip", [][2]string{{"z.zip", string(mediatest.Zip(
		[2]string{"z1.png", noise(11)}, [2]string{"z2.png", noise(12)}, [2]string{"z3.png", noise(13)}))}})
	body = html.UnescapeString(res.body)
	if !strings.Contains(body, "<strong>z3.png</strong>: the zip expands to more than 2.0 MiB: this file and the 0 entries after it were not read") ||
		!strings.Contains(body, "2 added, 1 rejected") {
		t.Fatalf("%d %.3000s", res.StatusCode, body)
	}

	b := newApp(t)
	st = b.study("bomb", 0, 3, study.StatusDraft)
	c = b.admin()
	var flat bytes.Buffer
	(&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&flat, image.NewNRGBA(image.Rect(0, 0, 700, 700)))
	// Three copies, not more: each is refused on its own, and every copy
	// costs a 9 MiB read under -race (twenty took 30 s of the race run).
	bomb := mediatest.RepeatZip(3, mediatest.AncillaryPNG(9<<20, 1)) // under the 10 MiB of an image
	res = upload(t, b, c, "bomb", [][2]string{{"bomb.zip", string(bomb)}, {"flat.zip", string(mediatest.Zip([2]string{"flat.png", flat.String()}))}})
	body = html.UnescapeString(res.body)
	for _, want := range []string{
		"<strong>img000.png</strong>: 9.0 MiB of ancillary chunks (text, profiles, private data) in the PNG image, the limit is 1.0 MiB",
		"<strong>img002.png</strong>: 9.0 MiB of ancillary chunks",
		"<strong>flat.png</strong>: compressed ",
		"0 added, 4 rejected",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := b.count(`SELECT count(*) FROM items`); n != 0 {
		t.Fatalf("%d items stored from %d bytes of zips", n, len(bomb))
	}
	_ = http.StatusOK
}
