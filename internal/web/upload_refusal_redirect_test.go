package web_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/web"
)

// part is one part of a multipart form: a file (its name possibly "",
// as a browser sends a file input left empty) or a text field.
type part struct {
	field string
	file  *string // nil: a text field
	data  string
}

func fileP(field, name, data string) part { return part{field: field, file: &name, data: data} }
func textP(field, data string) part       { return part{field: field, data: data} }

// multipartParts builds a multipart body of the parts, in order.
func multipartParts(t *testing.T, parts []part) (*bytes.Reader, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.file != nil {
			w, err = mw.CreateFormFile(p.field, *p.file)
		} else {
			w, err = mw.CreateFormField(p.field)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, p.data); err != nil {
			t.Fatal(err)
		}
	}
	mw.Close()
	return bytes.NewReader(body.Bytes()), mw.FormDataContentType()
}

// refusal is a browser upload the server must refuse whole.
type refusal struct {
	name string
	send func() response // the POST, not followed
	want string          // the reason, as the study page shows it
}

// checkRefusals sends each refusal: it must end in a 303 to the study
// page's report (matching to), the page shows want in the report (also
// when reloaded) and nothing but the one report is stored (stored says
// what the study holds, e.g. its items; it must not change).
func checkRefusals(t *testing.T, a *app, admin *http.Client, to *regexp.Regexp, report string, stored func() string, cases []refusal) {
	t.Helper()
	before := stored()
	for _, c := range cases {
		reports := a.count(`SELECT count(*) FROM upload_reports`)
		res := c.send()
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !to.MatchString(loc) {
			t.Errorf("%s: %d to %q, want 303 to the study page's report:\n%.1000s", c.name, res.StatusCode, loc, res.body)
			continue
		}
		for range 2 { // a reload shows it again
			page := a.do(admin, "GET", loc, nil, nil)
			if page.StatusCode != http.StatusOK || !strings.Contains(page.body, report+c.want) {
				t.Errorf("%s: the study page after the refusal: %d, want %q:\n%.2000s", c.name, page.StatusCode, report+c.want,
					strings.Join(noticeRE.FindAllString(page.body, -1), "\n"))
			}
		}
		if got := stored(); got != before {
			t.Errorf("%s: the study holds %s, held %s before", c.name, got, before)
		}
		if n := a.count(`SELECT count(*) FROM upload_reports`); n != reports+1 {
			t.Errorf("%s: %d upload reports stored, want 1", c.name, n-reports)
		}
	}
}

// An image upload refused whole (over the upload limit, no file chosen,
// not multipart, too many parts or files, an over-long field, a file name
// the store cannot keep) ends like one that went through: a 303 to the
// study page, which shows the reason from the upload's report, so a
// reload of it never sends the files again; no item is stored.
func TestUploadRefusalsRedirect(t *testing.T) {
	t.Parallel()
	// 200 files an upload (the default is 20,000): the parts and entries
	// over it are few enough to be quick under -race.
	a := newAppWith(t, web.Config{MaxUploadBytes: 8 << 20, MaxImageBytes: 1 << 20, MaxUploadFiles: 200})
	st := a.study("up", 0, 3, "draft")
	admin := a.admin()
	post := func(parts ...part) func() response {
		return func() response {
			body, ctype := multipartParts(t, parts)
			req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/up/items", body)
			req.Header.Set("Content-Type", ctype)
			return a.send(admin, req)
		}
	}
	png := string(mediatest.SmallPNG(1))
	var emptyInputs, twoZips []part
	for range 201 {
		emptyInputs = append(emptyInputs, fileP("files", "", ""))
	}
	var entries [][2]string
	for i := range 101 {
		entries = append(entries, [2]string{fmt.Sprintf("e%d.png", i), "x"})
	}
	zip := string(mediatest.Zip(entries...))
	twoZips = []part{fileP("files", "a.zip", zip), fileP("files", "b.zip", zip)}
	items := func() string {
		return fmt.Sprint(a.count(`SELECT count(*) FROM items WHERE study_id = $1`, st.ID), " items")
	}
	checkRefusals(t, a, admin, regexp.MustCompile(`^/admin/studies/up\?upload=[a-z0-9]+#upload$`),
		`id="upload-refused">Upload refused, nothing added: `, items, []refusal{
			{"over the upload limit", post(fileP("files", "ok.png", png), fileP("files", "big.png", string(make([]byte, 9<<20)))),
				"the upload is larger than 8.0 MiB (it reached the limit in big.png); nothing was added: split it"},
			{"no file chosen", post(fileP("files", "", "")), "choose at least one file"},
			{"not multipart", func() response {
				return a.do(admin, "POST", "/admin/studies/up/items", url.Values{"files": {"x"}}, nil)
			}, "unreadable upload (multipart/form-data expected)"},
			{"too many parts", post(emptyInputs...), "the upload has more than 200 parts; nothing was added: split it"},
			{"too many files", post(twoZips...),
				"the upload holds more than 200 files (zip entries included); nothing was added: split it"},
			{"over-long field", post(textP("note", strings.Repeat("x", 64<<10+1)), fileP("files", "ok.png", png)),
				"the field &#34;note&#34; is longer than 64.0 KiB"},
			{"a file name the store cannot keep", post(fileP("files", "ok.png", png), fileP("files", "a\xffb.png", string(mediatest.SmallPNG(2)))),
				"the text contains a NUL character or is not valid UTF-8, which cannot be stored"},
			{"a malformed part header", func() response {
				body := "--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.png\"\r\n" +
					strings.Repeat("\xff", 100<<10) + "\r\n\r\nx\r\n--b--\r\n"
				req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/up/items", strings.NewReader(body))
				req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
				return a.send(admin, req)
			}, `unreadable upload: malformed MIME header: missing colon: &#34;\xff\xff`},
		})
	// The malformed header is quoted in the reason, cut to 8 KiB.
	if n := a.count(`SELECT max(octet_length(report->>'refused')) FROM upload_reports`); n < 8<<10 || n > 8<<10+3 {
		t.Errorf("the longest reason kept is %d bytes, want 8 KiB and an ellipsis", n)
	}
}

// A gold-triplet upload that cannot be received (over the upload limit,
// no file, two files, not multipart, an over-long field) ends as one with
// bad rows does: a 303 to the study page, which shows the reason from the
// upload's report; the gold triplets stored before are kept as they were.
func TestGoldUploadRefusalsRedirect(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, web.Config{MaxUploadBytes: 1 << 20})
	st := a.study("gold", 4, 3, "draft")
	admin := a.admin()
	items, err := a.store.ListItems(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	row := items[0].Label + "," + items[1].Label + "," + items[2].Label + "\n"
	if res := a.upload(admin, "/admin/studies/gold/gold", nil, []byte("anchor,closer,farther\n"+row), "gold.csv"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("good file: %d %s", res.StatusCode, res.body)
	}
	post := func(parts ...part) func() response {
		return func() response {
			body, ctype := multipartParts(t, parts)
			req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/gold/gold", body)
			req.Header.Set("Content-Type", ctype)
			return a.send(admin, req)
		}
	}
	gold := func() string {
		var s string
		if err := a.pool.QueryRow(t.Context(), `
			SELECT coalesce(string_agg(concat_ws(',', g.line, x.idx, y.idx, z.idx), ';' ORDER BY g.line), '')
			FROM gold_triplets g JOIN items x ON x.id = g.anchor_item JOIN items y ON y.id = g.closer_item
				JOIN items z ON z.id = g.farther_item
			WHERE g.study_id = $1`, st.ID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return "gold triplets " + s
	}
	if gold() != "gold triplets 2,0,1,2" {
		t.Fatalf("stored %s", gold())
	}
	big := "anchor,closer,farther\n" + strings.Repeat(row, 2<<20/len(row))
	checkRefusals(t, a, admin, regexp.MustCompile(`^/admin/studies/gold\?upload=[a-z0-9]+#gold$`),
		`id="gold-report">Gold triplets not stored: `, gold, []refusal{
			{"over the upload limit", post(fileP("file", "big.csv", big)),
				"the upload is larger than 1.0 MiB (it reached the limit in big.csv); nothing was added: split it"},
			{"no file chosen", post(fileP("file", "", "")), "choose a file"},
			{"two files", post(fileP("file", "a.csv", "anchor,closer,farther\n"), fileP("file", "b.csv", "anchor,closer,farther\n")),
				"choose one file (this upload has a.csv and b.csv)"},
			{"not multipart", func() response {
				return a.do(admin, "POST", "/admin/studies/gold/gold", url.Values{"file": {"x"}}, nil)
			}, "unreadable upload (multipart/form-data expected)"},
			{"over-long field", post(textP("note", strings.Repeat("x", 64<<10+1)), fileP("file", "gold.csv", "anchor,closer,farther\n")),
				"the field &#34;note&#34; is longer than 64.0 KiB"},
		})
}

// endless is a request body of n bytes that counts what was read of it.
type endless struct {
	head []byte
	n    int64
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	off := e.read.Load()
	if off >= e.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n-off)]
	for i := range p {
		p[i] = 'x'
		if j := off + int64(i); j < int64(len(e.head)) {
			p[i] = e.head[j]
		}
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

// An upload over the limit is refused with a redirect as soon as it
// reaches the limit: the server stops reading, so the client sends little
// more than the limit of a body many times larger.
func TestUploadOverLimitStopsReading(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, web.Config{MaxUploadBytes: 4 << 20})
	a.study("up", 0, 3, "draft")
	admin := a.admin()
	for _, c := range []struct{ path, field, to string }{
		{"/admin/studies/up/items", "files", "#upload"},
		{"/admin/studies/up/gold", "file", "#gold"},
	} {
		boundary := "b0undary"
		head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + c.field + "\"; filename=\"big.png\"\r\n" +
			"Content-Type: application/octet-stream\r\n\r\n"
		body := &endless{head: []byte(head), n: 256 << 20}
		req, _ := http.NewRequest("POST", a.srv.URL+c.path, body)
		req.ContentLength = body.n
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		res, err := admin.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, c.to) {
			t.Errorf("%s: %d to %q, want 303 to the study page", c.path, res.StatusCode, loc)
		}
		t.Logf("%s: the client sent %.1f MiB", c.path, float64(body.read.Load())/(1<<20))
		if n := body.read.Load(); n > 32<<20 {
			t.Errorf("%s: the client sent %d MiB of the 256 MiB body; the server reads 4 MiB", c.path, n>>20)
		}
	}
}
