package studyfile

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// bundleParts are the files of a hand-made bundle, to be spoiled by tests.
type bundleParts struct {
	manifest, study              string
	items, participants, answers string
	images                       map[string][]byte
	extra                        [][2]string // more files: name, content
	omit                         string      // a file left out
}

// testPNG is a 2×2 PNG whose colour depends on seed.
func testPNG(seed uint8) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	m.Set(0, 0, color.NRGBA{seed, 100, 200, 255})
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// validParts is a bundle of three items (two images, one label), two
// participants and two answers.
func validParts() bundleParts {
	a, b := testPNG(1), testPNG(2)
	return bundleParts{
		manifest: `{"format": "closer-study-bundle", "version": 1, "counts": {"items": 3, "participants": 2, "answers": 2}}`,
		study:    `{"slug": "tiny", "title": "Tiny", "questions_per_participant": 5, "status": "open", "design": "random"}`,
		items: "index,label,file_name,content_type,sha256,width,height,image\n" +
			"0,a,a.png,image/png," + hexSum(a) + ",2,2,images/0-a.png\n" +
			"1,b,b.png,image/png," + hexSum(b) + ",2,2,images/1-b.png\n" +
			"2,c,c,,label-2,0,0,\n",
		participants: "participant,external_id,completion_code,created_at,completed_at,excluded_at\n" +
			"p1,x-1,,2026-01-01T00:00:00Z,,\n" +
			"p2,,CODE,2026-01-01T00:00:00Z,2026-01-01T01:00:00Z,\n",
		answers: "question_id,participant,anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at\n" +
			"q1,p1,0,1,2,1,2,random,800,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z\n" +
			"q2,p2,1,0,2,2,0,random,,2026-01-01T00:00:00Z,2026-01-01T00:00:02Z\n",
		images: map[string][]byte{"images/0-a.png": a, "images/1-b.png": b},
	}
}

// zip writes the bundle (deflated, so repeated rows cost almost nothing).
func (p bundleParts) zip(t testing.TB) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		if name == p.omit {
			return
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	add("manifest.json", []byte(p.manifest))
	add("study.json", []byte(p.study))
	add("items.csv", []byte(p.items))
	for _, name := range []string{"images/0-a.png", "images/1-b.png"} {
		if data, ok := p.images[name]; ok {
			add(name, data)
		}
	}
	add("participants.csv", []byte(p.participants))
	add("answers.csv", []byte(p.answers))
	for _, e := range p.extra {
		add(e[0], []byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// emptyRowsAnswers is answers.csv with n rows of empty fields (the probe's
// 116 KB bundle had 5 million of them).
func emptyRowsAnswers(n int) string {
	return "question_id,participant,anchor,left,right,closer,farther,design,response_ms,asked_at,answered_at\n" +
		strings.Repeat(",,,,,,,,,,\n", n)
}

// spoiledBundles are bundles that must be refused, with the start of the
// reason. The HTML "image" is the probe's stored XSS.
func spoiledBundles() map[string]struct {
	parts  func(p *bundleParts)
	reason string
} {
	html := []byte("<!DOCTYPE html><script>fetch('/admin/account/tokens',{method:'POST'})</script>")
	return map[string]struct {
		parts  func(p *bundleParts)
		reason string
	}{
		"html-image": {func(p *bundleParts) {
			p.images["images/0-a.png"] = html
			p.items = strings.Replace(p.items, "image/png,"+hexSum(testPNG(1)), "text/html,"+hexSum(html), 1)
		}, "not a valid study bundle: items.csv line 2: images/0-a.png: not an image (content looks like text/html"},
		"type-says-html": {func(p *bundleParts) {
			p.items = strings.Replace(p.items, "0,a,a.png,image/png", "0,a,a.png,text/html", 1)
		}, `not a valid study bundle: items.csv line 2: images/0-a.png is image/png 2×2, items.csv says "text/html" 2×2`},
		"size-lies": {func(p *bundleParts) {
			p.items = strings.Replace(p.items, ",2,2,images/1-b.png", ",4000,3000,images/1-b.png", 1)
		}, `not a valid study bundle: items.csv line 3: images/1-b.png is image/png 2×2, items.csv says "image/png" 4000×3000`},
		"trailing-bytes": {func(p *bundleParts) {
			img := append(testPNG(1), "<script>alert(1)</script>"...)
			p.images["images/0-a.png"] = img
			p.items = strings.Replace(p.items, hexSum(testPNG(1)), hexSum(img), 1)
		}, "not a valid study bundle: items.csv line 2: images/0-a.png: 25 bytes after the end of the PNG image"},
		"wrong-hash": {func(p *bundleParts) {
			p.items = strings.Replace(p.items, hexSum(testPNG(1)), hexSum(testPNG(9)), 1)
		}, "not a valid study bundle: items.csv line 2: images/0-a.png does not match its sha256"},
		"type-without-image": {func(p *bundleParts) {
			p.items = strings.Replace(p.items, "2,c,c,,label-2", "2,c,c,text/html,label-2", 1)
		}, "not a valid study bundle: items.csv line 4: an item with a content type needs an image"},
		"items-count": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"items": 3`, `"items": 4`, 1)
		}, "not a valid study bundle: items.csv has 3 rows, manifest.json counts 4"},
		"answers-count-low": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"answers": 2`, `"answers": 3`, 1)
		}, "not a valid study bundle: answers.csv has 2 rows, manifest.json counts 3"},
		"answers-count-high": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"answers": 2`, `"answers": 1`, 1)
		}, "not a valid study bundle: answers.csv line 3: more rows than manifest.json counts (1)"},
		"participants-count": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"participants": 2`, `"participants": 1`, 1)
		}, "not a valid study bundle: participants.csv line 3: more rows than manifest.json counts (1)"},
		"no-counts": {func(p *bundleParts) {
			p.manifest = `{"format": "closer-study-bundle", "version": 1}`
		}, "not a valid study bundle: manifest.json has no count of items"},
		"empty-rows": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"answers": 2`, `"answers": 5000000`, 1)
			p.answers = emptyRowsAnswers(100_000)
		}, "not a valid study bundle: answers.csv line 2: anchor is not an item index"},
		"too-many-answers": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"answers": 2`, `"answers": 5000001`, 1)
		}, "not a valid study bundle: manifest.json counts 5000001 answers; the limit is 5000000"},
		"unknown-participant": {func(p *bundleParts) {
			p.answers = strings.Replace(p.answers, "q2,p2,", "q2,p9,", 1)
		}, `answers.csv line 3: unknown participant "p9"`},
		"repeated-participant": {func(p *bundleParts) {
			p.participants = strings.Replace(p.participants, "p2,,CODE", "p1,,CODE", 1)
		}, "not a valid study bundle: participants.csv names a participant twice"},
		"nul-byte": {func(p *bundleParts) {
			p.participants = strings.Replace(p.participants, "x-1", "x\x001", 1)
		}, "not a valid study bundle: participants.csv line 2: external_id holds a NUL byte or invalid UTF-8"},
		"repeated-index": {func(p *bundleParts) {
			p.items = strings.Replace(p.items, "2,c,c,,label-2", "1,c,c,,label-2", 1)
		}, "not a valid study bundle: items.csv line 4: index 1 is repeated"},
		"missing-image": {func(p *bundleParts) { delete(p.images, "images/1-b.png") },
			"not a valid study bundle: items.csv line 3: the image images/1-b.png is not in the bundle"},
		"missing-answers": {func(p *bundleParts) { p.omit = "answers.csv" },
			"not a valid study bundle: answers.csv is missing"},
		"twice": {func(p *bundleParts) { p.extra = [][2]string{{"items.csv", "index\n"}} },
			`not a valid study bundle: the zip holds "items.csv" twice`},
		"arm-beyond-the-arms": {func(p *bundleParts) {
			p.manifest = strings.Replace(p.manifest, `"version": 1`, `"version": 3`, 1)
			p.participants = strings.Replace(strings.Replace(strings.Replace(p.participants, "excluded_at\n", "excluded_at,arm\n", 1),
				"00Z,,\n", "00Z,,,0\n", 1), "01:00:00Z,\n", "01:00:00Z,,1\n", 1)
		}, `not a valid study bundle: participants.csv line 3: arm "1" is not one of the study's arms 0..0`},
		"one-arm": {func(p *bundleParts) {
			p.study = strings.Replace(p.study, `"design": "random"`, `"arms": [{"name": "a", "design": "random", "share": 1}]`, 1)
		}, "not a valid study bundle: study.json: a study runs between 2 and 8 arms"},
		"arms-shares": {func(p *bundleParts) {
			p.study = strings.Replace(p.study, `"design": "random"`,
				`"arms": [{"name": "a", "design": "random", "share": 0.5}, {"name": "b", "design": "random", "share": 0.6}]`, 1)
		}, "not a valid study bundle: study.json: the arms' shares must be positive and sum to 1"},
		"held-out-share": {func(p *bundleParts) {
			p.study = strings.Replace(p.study, `"design": "random"`, `"design": "random", "heldout_share": 0.9`, 1)
		}, "held-out share must be between 0 and 0.5"},
		"long-row": {func(p *bundleParts) {
			p.participants += "p3," + strings.Repeat("x", 2<<20) + ",,2026-01-01T00:00:00Z,,\n"
		}, "not a valid study bundle: participants.csv: a row (or a run of blank lines) longer than 1 MiB after line 3"},
	}
}

func TestImportBundleRefusesAndStoresNothing(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	for name, c := range spoiledBundles() { //nolint:paralleltest // subtests check what one shared database stores
		t.Run(name, func(t *testing.T) {
			p := validParts()
			c.parts(&p)
			data := p.zip(t)
			_, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: ""}, BundleLimits{})
			if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("got %v, want a 422 with %q", err, c.reason)
			}
		})
	}
	var studies, items int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM studies), (SELECT count(*) FROM items)`).Scan(&studies, &items); err != nil {
		t.Fatal(err)
	}
	if studies != 0 || items != 0 {
		t.Fatalf("refused bundles stored %d studies and %d items", studies, items)
	}
	// The unspoiled bundle imports, with its images' types from the bytes.
	data := validParts().zip(t)
	st, rep, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: ""}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if rep != (Report{Items: 3, Participants: 2, Answers: 2}) || st.Status != study.StatusPaused {
		t.Fatalf("report %+v, status %s", rep, st.Status)
	}
	ct, img, err := s.ItemImage(ctx, hexSum(testPNG(2)))
	if err != nil || ct != "image/png" || !bytes.Equal(img, testPNG(2)) {
		t.Fatalf("image: %q %v", ct, err)
	}
}

// TestImportBundleLimits: rows beyond a limit are refused as they are read.
func TestImportBundleLimits(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		lim    BundleLimits
		parts  func(p *bundleParts)
		reason string
	}{
		{"answers", BundleLimits{MaxAnswers: 1}, func(*bundleParts) {}, "manifest.json counts 2 answers; the limit is 1"},
		{"items", BundleLimits{MaxItems: 2}, func(*bundleParts) {}, "manifest.json counts 3 items; the limit is 2"},
		{"image bytes", BundleLimits{MaxImageBytes: 50}, func(*bundleParts) {}, "items.csv line 2: images/0-a.png: too large"},
		// The probe's 70,000-character label, and a file name past its bound.
		{"label", BundleLimits{}, func(p *bundleParts) {
			p.items = strings.Replace(p.items, "0,a,a.png", "0,"+strings.Repeat("a", 70000)+",a.png", 1)
		}, "items.csv line 2: label: a label of 70,000 characters, the limit is 200 characters"},
		{"file name", BundleLimits{}, func(p *bundleParts) {
			p.items = strings.Replace(p.items, "2,c,c,", "2,c,"+strings.Repeat("c", 1025)+",", 1)
		}, "items.csv line 4: file_name: 1.0 KiB, the limit is 1024 bytes"},
		{"images bytes", BundleLimits{MaxImagesBytes: 100}, func(*bundleParts) {},
			"items.csv line 3: the images up to images/1-b.png take more than 100 bytes, the limit of a study's images"},
		{"padding", BundleLimits{}, func(p *bundleParts) {
			var flat bytes.Buffer
			(&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&flat, image.NewNRGBA(image.Rect(0, 0, 700, 700)))
			p.images["images/0-a.png"] = flat.Bytes()
			p.items = strings.Replace(p.items, "0,a,a.png,image/png,"+hexSum(testPNG(1))+",2,2", "0,a,a.png,image/png,"+hexSum(flat.Bytes())+",700,700", 1)
		}, "items.csv line 2: images/0-a.png: compressed "},
		{"CSV bytes", BundleLimits{MaxCSVBytes: 300}, func(p *bundleParts) {
			p.answers += strings.Repeat("q3,p1,0,1,2,1,2,random,800,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z\n", 3)
		}, "answers.csv: larger than 300 bytes (the limit)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := validParts()
			c.parts(&p)
			data := p.zip(t)
			_, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: ""}, c.lim)
			if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("%+v: got %v, want %q", c.lim, err, c.reason)
			}
		})
	}
}

// bundleSeeds are the valid and spoiled bundles, compact, for the fuzzer.
func bundleSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{"valid": validParts().zip(t),
		"odd-one-out": trialParts("odd-one-out", oddOK).zip(t), "rank": trialParts("rank:4:2", rankOK).zip(t)}
	for name, c := range spoiledBundles() {
		if name == "long-row" {
			continue // 2 MiB of x compress well, but the seed file stays small without it
		}
		p := validParts()
		c.parts(&p)
		if name == "empty-rows" {
			p.answers = emptyRowsAnswers(2000)
		}
		seeds[name] = p.zip(t)
	}
	return seeds
}
