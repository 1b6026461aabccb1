package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// newAppWith is newApp with upload limits of the test's choosing.
func newAppWith(t *testing.T, cfg web.Config) *app {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUploadRefusals sends every kind of bad file through the real router
// with small limits (8 MiB an upload, 1 MiB an image): each is named with
// its reason, only the good image is stored.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	// 200 files an upload (rather than the default 20,000) keeps the zip
	// of too many entries small: under -race reading 20,001 took a minute.
	a := newAppWith(t, web.Config{MaxUploadBytes: 8 << 20, MaxImageBytes: 1 << 20, MaxUploadFiles: 200})
	st := a.study("up", 0, 3, "draft")
	c := a.admin()
	items := func() int { return a.count(`SELECT count(*) FROM items WHERE study_id = $1`, st.ID) }

	// Uploads refused whole (over the upload limit, no file, not
	// multipart): TestUploadRefusalsRedirect.
	var many [][2]string
	for i := range 201 {
		many = append(many, [2]string{fmt.Sprintf("e%d", i), ""})
	}
	padded := mediatest.PaddedPNG(512 << 10)
	res := upload(t, a, c, "up", [][2]string{
		{"good.png", string(mediatest.SmallPNG(2))},
		{"many.zip", string(mediatest.Zip(many...))},
		{"expands.zip", string(mediatest.PaddedZip(18, 1<<20))},
		{"folders.zip", string(mediatest.Zip([2]string{"photos/", ""}, [2]string{".DS_Store", "x"}))},
		{"empty.zip", string(mediatest.Zip())},
		{"padded.png", string(padded)},
		{"huge.png", string(mediatest.HugeHeaderPNG())},
		{"bomb.png", string(mediatest.ZlibBombPNG(false))},
		{"large.png", string(make([]byte, 2<<20))},
		{"page.png", "<!DOCTYPE html><script>alert(1)</script>"},
		{"drawing.svg", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`},
	})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %.500s", res.StatusCode, res.body)
	}
	for _, want := range []string{
		"<strong>many.zip</strong>: the zip lists too many files (201 files, the limit is 200 files)",
		// The zip may expand to twice the upload limit: 16 entries of 1 MiB.
		"<strong>img016.png</strong>: the zip expands to more than 16.0 MiB: this file and the 1 entry after it were not read",
		"<strong>img000.png</strong>: 1,048,497 bytes after the end of the PNG image",
		"<strong>folders.zip</strong>: the zip holds no images (only folders and hidden files)",
		"<strong>empty.zip</strong>: the zip holds no files",
		fmt.Sprintf("<strong>padded.png</strong>: %d,%03d bytes after the end of the PNG image", (len(padded)-len(mediatest.SmallPNG(0)))/1000, (len(padded)-len(mediatest.SmallPNG(0)))%1000),
		"<strong>huge.png</strong>: too many pixels: 50000×50000 is 2500 megapixels, the limit is 24 megapixels",
		"<strong>bomb.png</strong>: too many pixels: 20000×20000 is 400 megapixels",
		"<strong>large.png</strong>: too large (2.0 MiB, the limit is 1.0 MiB)",
		"<strong>page.png</strong>: not an image (content looks like text/html",
		"<strong>drawing.svg</strong>: an SVG drawing, which is not accepted",
		"1 added, 26 rejected",
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("upload report lacks %q", want)
		}
	}
	if items() != 1 {
		t.Fatalf("%d items stored, want the good one", items())
	}
}

// rewriteZip copies a zip, passing each entry through edit (nil drops it).
func rewriteZip(t *testing.T, data []byte, edit func(name string, b []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if b = edit(f.Name, b); b == nil {
			continue
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

// editItem rewrites row 1 (item 0) of items.csv and returns its image name.
func editItem(t *testing.T, items []byte, edit func(rec []string)) ([]byte, string) {
	recs, err := csv.NewReader(bytes.NewReader(items)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	edit(recs[1])
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), recs[1][7]
}

// TestBundleCannotServeAnythingButImages: the probe's stored XSS. A bundle
// whose "image" is HTML, or whose items.csv claims text/html, is refused
// and stores nothing; rows already stored that are not images are never
// served; images are served with a type from their bytes, nosniff and an
// inline disposition with a safe name.
func TestBundleCannotServeAnythingButImages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	a.study("orig", 4, 3, study.StatusOpen)
	bundle := a.do(admin, "GET", "/admin/studies/orig/bundle.zip", nil, nil)
	if bundle.StatusCode != 200 {
		t.Fatal(bundle.StatusCode)
	}
	html := []byte("<!DOCTYPE html><script>fetch('/admin/account/tokens',{method:'POST'})</script>")
	var imageName string
	htmlImage := rewriteZip(t, []byte(bundle.body), func(name string, b []byte) []byte {
		if name == "items.csv" {
			b, imageName = editItem(t, b, func(rec []string) { rec[3], rec[4] = "text/html", sha(html) })
		}
		return b
	})
	htmlImage = rewriteZip(t, htmlImage, func(name string, b []byte) []byte {
		if name == imageName {
			return html
		}
		return b
	})
	saysHTML := rewriteZip(t, []byte(bundle.body), func(name string, b []byte) []byte {
		if name == "items.csv" {
			b, _ = editItem(t, b, func(rec []string) { rec[3] = "text/html" })
		}
		return b
	})
	counts := rewriteZip(t, []byte(bundle.body), func(name string, b []byte) []byte {
		if name == "manifest.json" {
			return bytes.Replace(b, []byte(`"items": 4`), []byte(`"items": 5`), 1)
		}
		return b
	})
	rows := rewriteZip(t, []byte(bundle.body), func(name string, b []byte) []byte {
		if name == "manifest.json" {
			return bytes.Replace(b, []byte(`"answers": 0`), []byte(`"answers": 5000001`), 1)
		}
		return b
	})
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
	}{
		{"html.zip", htmlImage, "html.zip: not a valid study bundle: items.csv line 2: " + imageName + ": not an image (content looks like text/html"},
		{"says.zip", saysHTML, "says.zip: not a valid study bundle: items.csv line 2: " + imageName + ` is image/png 160×160, items.csv says &#34;text/html&#34; 160×160`},
		{"counts.zip", counts, "counts.zip: not a valid study bundle: items.csv has 4 rows, manifest.json counts 5"},
		{"rows.zip", rows, "rows.zip: not a valid study bundle: manifest.json counts 5000001 answers; the limit is 5000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := a.upload(admin, "/admin/import/bundle", map[string]string{"slug": "copy"}, c.data, c.name)
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, c.reason) {
				t.Errorf("%d, want 422 with %q in %.2000s", res.StatusCode, c.reason, res.body)
			}
		})
	}
	if n := a.count(`SELECT count(*) FROM studies WHERE slug = 'copy'`); n != 0 {
		t.Fatal("a refused bundle stored its study")
	}

	// Rows stored before these checks (or by any other path): HTML is not
	// served, a PNG labelled text/html is served as a PNG.
	ctx := context.Background()
	var studyID int64
	if err := a.pool.QueryRow(ctx, `SELECT id FROM studies WHERE slug = 'orig'`).Scan(&studyID); err != nil {
		t.Fatal(err)
	}
	png := mediatest.SmallPNG(7)
	if _, err := a.pool.Exec(ctx, `INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
		VALUES ($1, 10, 'x', 'x.html', 'text/html', $2, 1, 1, $3), ($1, 11, 'y', 'y.png', 'text/html', $4, 2, 2, $5),
		       ($1, 12, 'z', 'z.png', 'image/png', $6, 2, 2, $7)`,
		studyID, sha(html), html, sha(png), png, sha([]byte("other bytes")), mediatest.SmallPNG(8)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{sha(html), sha([]byte("other bytes"))} {
		res := a.do(http.DefaultClient, "GET", "/img/"+bad, nil, nil)
		if res.StatusCode != http.StatusNotFound || strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") && strings.Contains(res.body, "<script>") {
			t.Fatalf("/img of a stored non-image: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	res := a.do(http.DefaultClient, "GET", "/img/"+sha(png), nil, nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		res.Header.Get("Content-Disposition") != `inline; filename="`+sha(png)+`.png"` || res.body != string(png) {
		t.Fatalf("/img of a PNG labelled text/html: %d %v", res.StatusCode, res.Header)
	}

	// The honest bundle imports and its images are served as images.
	if res := a.upload(admin, "/admin/import/bundle", map[string]string{"slug": "copy"}, []byte(bundle.body), "b.zip"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %.300s", res.StatusCode, res.body)
	}
	var sums []string
	rs, err := a.pool.Query(ctx, `SELECT sha256 FROM items i JOIN studies s ON s.id = i.study_id WHERE s.slug = 'copy'`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	if len(sums) != 4 {
		t.Fatalf("%d items imported", len(sums))
	}
	for _, s := range sums { //nolint:paralleltest // a loop of checks, not a table of subtests
		res := a.do(http.DefaultClient, "GET", "/img/"+s, nil, nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
			res.Header.Get("Content-Disposition") != `inline; filename="`+s+`.png"` {
			t.Fatalf("/img/%s: %d %v", s, res.StatusCode, res.Header)
		}
	}
}

// heapInUse is the bytes of heap objects, live or not yet swept.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapGrowth runs do while sampling the heap every millisecond, and
// returns its peak above what it was before.
func heapGrowth(do func()) uint64 {
	runtime.GC()
	base := heapInUse()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var top uint64
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
				top = max(top, heapInUse())
			}
		}
	}()
	do()
	close(stop)
	return max(<-peak, base) - base
}

// multipartBody builds an upload of one file in a field, for sending later.
func multipartBody(field, name string, data []byte, fields map[string]string) (*bytes.Reader, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(data)
	mw.Close()
	return bytes.NewReader(body.Bytes()), mw.FormDataContentType()
}

// TestUploadMemoryStaysFlat measures the server's own heap (the test
// process holds the real router and only the already built request
// bodies) while it refuses the probe's bombs with the default limits
// (512 MiB an upload, 10 MiB an image), and checks that nothing was stored.
// Not parallel: the heap is the process's, and a parallel test's
// allocations counted as the server's (the run of 2026-11-27 on a loaded
// machine saw 79 MiB).
func TestUploadMemoryStaysFlat(t *testing.T) { //nolint:paralleltest // measures the process's heap, so runs alone
	a := newApp(t)
	admin := a.admin()
	st := a.study("up", 0, 3, "draft")
	a.study("orig", 4, 3, study.StatusOpen)
	bundle := a.do(admin, "GET", "/admin/studies/orig/bundle.zip", nil, nil)
	emptyRows := func(rows string) []byte {
		return rewriteZip(t, []byte(bundle.body), func(name string, b []byte) []byte {
			switch name {
			case "manifest.json":
				return bytes.Replace(b, []byte(`"answers": 0`), []byte(`"answers": 5000000`), 1)
			case "answers.csv":
				return append(b, strings.Repeat(rows, 5_000_000)...)
			}
			return b
		})
	}
	const limit = 64 << 20
	for _, c := range []struct { //nolint:paralleltest // subtests measure the process's memory one at a time
		name, path, field, file string
		data                    []byte
		status                  int
		reason                  string
	}{
		{"zip of 100 padded PNGs", "/admin/studies/up/items", "files", "bomb.zip", mediatest.PaddedZip(100, 10<<20), 200,
			"0 added, 100 rejected"},
		{"bundle with 5 million empty rows", "/admin/import/bundle", "file", "rows.zip", emptyRows(",,,,,,,,,,\n"), 422,
			"rows.zip: not a valid study bundle: answers.csv line 2: anchor is not an item index"},
		{"bundle with 5 million blank lines", "/admin/import/bundle", "file", "blank.zip", emptyRows("\n"), 422,
			"blank.zip: not a valid study bundle: answers.csv: a row (or a run of blank lines) longer than 1 MiB after line 1"},
		{"huge-header PNG", "/admin/studies/up/items", "files", "huge.png", mediatest.HugeHeaderPNG(), 200,
			"<strong>huge.png</strong>: too many pixels"},
		{"zlib-bomb PNG", "/admin/studies/up/items", "files", "bomb.png", mediatest.ZlibBombPNG(true), 200,
			"<strong>bomb.png</strong>: too many pixels: 20000×20000"},
	} {
		// Subtests in sequence (never parallel): each measures the heap.
		t.Run(c.name, func(t *testing.T) {
			body, ctype := multipartBody(c.field, c.file, c.data, map[string]string{"slug": "copy"})
			var res response
			grew := heapGrowth(func() {
				req, _ := http.NewRequest("POST", a.srv.URL+c.path, body)
				req.Header.Set("Content-Type", ctype)
				res = a.send(admin, req)
			})
			if strings.HasSuffix(c.path, "/items") {
				res = a.afterUpload(admin, "up", res)
			}
			t.Logf("%d KiB: the heap grew by %.1f MiB", len(c.data)>>10, float64(grew)/(1<<20))
			if res.StatusCode != c.status || !strings.Contains(res.body, c.reason) {
				t.Errorf("%d, want %d with %q in %.3000s", res.StatusCode, c.status, c.reason, res.body)
			}
			if grew > limit {
				t.Errorf("the heap grew by %d MiB (at most %d)", grew>>20, limit>>20)
			}
		})
	}
	if n := a.count(`SELECT count(*) FROM items WHERE study_id = $1`, st.ID); n != 0 {
		t.Fatalf("%d items stored", n)
	}
	if n := a.count(`SELECT count(*) FROM studies WHERE slug = 'copy'`); n != 0 {
		t.Fatal("a refused bundle stored its study")
	}
}
