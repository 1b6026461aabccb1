package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/web"
)

func TestAdminLoginRequired(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("s", 3, 3, "open")
	c := a.client()
	for _, path := range []string{"/admin", "/admin/studies/s", "/admin/studies/new", "/admin/account", "/admin/studies/s/triplets.csv"} {
		res := a.do(c, "GET", path, nil, nil)
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/admin/login?next=") {
			t.Errorf("GET %s without login: %d %s", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	for _, path := range []string{"/admin/studies", "/admin/studies/s/delete", "/admin/account/tokens"} {
		res := a.do(c, "POST", path, url.Values{"confirm": {"yes"}}, nil)
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s without login: %d", path, res.StatusCode)
		}
	}
	if n := a.count(`SELECT count(*) FROM studies`); n != 1 {
		t.Fatalf("a refused request changed the studies")
	}
	if _, err := a.accounts.CreateAdmin(context.Background(), "r@example.org", "secret-password"); err != nil {
		t.Fatal(err)
	}
	res := a.do(c, "POST", "/admin/login", url.Values{"email": {"r@example.org"}, "password": {"wrong-password"}}, nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.body, "Wrong e-mail or password") {
		t.Fatalf("wrong password: %d", res.StatusCode)
	}
	res = a.do(c, "POST", "/admin/login", url.Values{"email": {"R@example.org"}, "password": {"secret-password"}, "next": {"/admin/account"}}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/account" {
		t.Fatalf("login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	ck := res.Cookies()[0]
	if ck.Name != "closer_session" || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure {
		t.Fatalf("session cookie %+v", ck)
	}
	if res := a.do(c, "GET", "/admin", nil, nil); res.StatusCode != 200 || !strings.Contains(res.body, "Study s") {
		t.Fatalf("studies after login: %d", res.StatusCode)
	}
	a.do(c, "POST", "/admin/logout", url.Values{}, nil)
	if res := a.do(c, "GET", "/admin", nil, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after logout: %d", res.StatusCode)
	}
}

func TestCrossOriginPostsRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("x", 4, 3, "open")
	c := a.admin()
	before := a.count(`SELECT count(*) FROM studies`)
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
		res := a.do(c, "POST", "/admin/studies/x/delete", url.Values{"confirm": {"yes"}}, h)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin delete with %v: %d", h, res.StatusCode)
		}
		res = a.do(a.client(), "POST", "/s/x/start", url.Values{}, h)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin start with %v: %d", h, res.StatusCode)
		}
	}
	if a.count(`SELECT count(*) FROM studies`) != before || a.count(`SELECT count(*) FROM participants`) != 0 {
		t.Fatalf("a cross-origin request changed something")
	}
	// Same-origin browser requests pass.
	res := a.do(c, "POST", "/admin/studies/x/delete", url.Values{"confirm": {"yes"}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if res.StatusCode != http.StatusSeeOther || a.count(`SELECT count(*) FROM studies WHERE deleted_at IS NULL`) != before-1 {
		t.Fatalf("same-origin delete: %d", res.StatusCode)
	}
	// The JSON API uses bearer tokens, not cookies: cross-origin front ends may call it.
	a.study("y", 4, 3, "open")
	req, _ := http.NewRequest("POST", a.srv.URL+"/api/v1/studies/y/participants", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res := a.send(http.DefaultClient, req); res.StatusCode != http.StatusCreated {
		t.Fatalf("cross-site API join: %d", res.StatusCode)
	}
}

func TestStudyCRUD(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	form := url.Values{"title": {"Birds"}, "slug": {"birds"}, "instructions": {"Look *closely*."}, "debrief": {"bye"},
		"questions_per_participant": {"20"}, "status": {"draft"}, "design": {"random"}}
	res := a.do(c, "POST", "/admin/studies", form, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/studies/birds" {
		t.Fatalf("create: %d %s", res.StatusCode, res.body)
	}
	res = a.do(c, "POST", "/admin/studies", form, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "is taken") {
		t.Fatalf("duplicate slug: %d", res.StatusCode)
	}
	bad := url.Values{"title": {"X"}, "slug": {"Not A Slug"}, "questions_per_participant": {"5"}, "status": {"open"}, "design": {"random"}}
	if res := a.do(c, "POST", "/admin/studies", bad, nil); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "URL slug") {
		t.Fatalf("bad slug: %d", res.StatusCode)
	}
	if res := a.do(c, "POST", "/admin/studies", url.Values{"title": {"X"}, "slug": {"x"}, "questions_per_participant": {"5"}, "design": {"smart"}}, nil); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("unknown design: %d", res.StatusCode)
	}
	form.Set("status", "open")
	form.Set("slug", "birds-2")
	res = a.do(c, "POST", "/admin/studies/birds", form, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/studies/birds-2?msg=saved" {
		t.Fatalf("update: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(c, "GET", "/admin/studies/birds-2?msg=saved", nil, nil); !strings.Contains(res.body, `id="message">Changes saved.<`) {
		t.Fatalf("the study page does not say the changes were saved")
	}
	res = a.do(c, "GET", "/admin/studies/birds-2", nil, nil)
	if res.StatusCode != 200 || !strings.Contains(res.body, "/s/birds-2") || !strings.Contains(res.body, "status-open") {
		t.Fatalf("study page: %d", res.StatusCode)
	}
	if res := a.do(c, "GET", "/admin/studies/birds-2/edit", nil, nil); !strings.Contains(res.body, `value="birds-2"`) {
		t.Fatalf("edit form lacks the slug")
	}
	if res := a.do(c, "POST", "/admin/studies/birds-2/delete", url.Values{}, nil); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("delete without confirmation: %d", res.StatusCode)
	}
	if res := a.do(c, "POST", "/admin/studies/birds-2/delete", url.Values{"confirm": {"yes"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if a.count(`SELECT count(*) FROM studies WHERE deleted_at IS NULL`) != 0 {
		t.Fatal("study not deleted")
	}
}

// upload posts files (name → bytes) to a study's items.
func upload(t *testing.T, a *app, c *http.Client, slug string, files [][2]string) response {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		w, err := mw.CreateFormFile("files", f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	mw.Close()
	req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/"+slug+"/items", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return a.afterUpload(c, slug, a.send(c, req))
}

// afterUpload follows an upload's redirect to the study page with its
// report, as a browser does; a refused upload (no redirect) is returned as
// it is.
func (a *app) afterUpload(c *http.Client, slug string, res response) response {
	a.t.Helper()
	if res.StatusCode != http.StatusSeeOther {
		return res
	}
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, "/admin/studies/"+slug+"?upload=") || !strings.HasSuffix(loc, "#upload") {
		a.t.Fatalf("upload redirected to %q", loc)
	}
	return a.do(c, "GET", strings.TrimSuffix(loc, "#upload"), nil, nil)
}

func TestUploadKeepsGoodFilesAndNamesBadOnes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("up", 0, 3, "draft")
	c := a.admin()
	imgs := demo.Items()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, f := range [][2]string{
		{"set/b10.png", string(imgs[3].Data)},
		{"set/b2.png", string(imgs[4].Data)},
		{"set/readme.txt", "hello"},
		{"../escape.png", string(imgs[5].Data)},
		{"set/again.png", string(imgs[0].Data)}, // same bytes as a1.png
	} {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
	}
	zw.Close()
	res := upload(t, a, c, "up", [][2]string{
		{"a1.png", string(imgs[0].Data)},
		{"a2.png", string(imgs[1].Data)},
		{"notes.png", "this is text, not a picture"},
		{"empty.png", ""},
		{"copy.png", string(imgs[1].Data)},
		{"more.zip", zbuf.String()},
	})
	if res.StatusCode != 200 {
		t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	for _, want := range []string{
		"<strong>notes.png</strong>: not an image",
		"<strong>empty.png</strong>: empty file",
		"<strong>copy.png</strong>: duplicate of a2.png",
		"<strong>set/readme.txt</strong>: not an image",
		"<strong>../escape.png</strong>: unsafe path",
		"<strong>set/again.png</strong>: duplicate of a1.png",
		"4 added, 6 rejected",
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("upload report lacks %q", want)
		}
	}
	items, err := a.store.ListItems(context.Background(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, it.FileName)
	}
	if strings.Join(names, " ") != "a1.png a2.png set/b2.png set/b10.png" {
		t.Fatalf("items %v", names)
	}
	if n := len(regexp.MustCompile(`<img src="/img/[0-9a-f]{64}"`).FindAllString(res.body, -1)); n != 4 {
		t.Fatalf("%d thumbnails, want 4", n)
	}
}

func TestAPITokensOnAccountPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("t", 3, 3, "open")
	c := a.admin()
	res := a.do(c, "POST", "/admin/account/tokens", url.Values{"name": {"my script"}}, nil)
	m := regexp.MustCompile(`id="new-token">([^<]+)<`).FindStringSubmatch(res.body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("create token: %d", res.StatusCode)
	}
	if res := a.api("GET", "/api/v1/studies/t/triplets.csv", m[1], "", nil); res.StatusCode != 200 {
		t.Fatalf("export with new token: %d", res.StatusCode)
	}
	id := regexp.MustCompile(`/admin/account/tokens/(\d+)/revoke`).FindStringSubmatch(res.body)[1]
	if res := a.do(c, "POST", "/admin/account/tokens/"+id+"/revoke", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if res := a.api("GET", "/api/v1/studies/t/triplets.csv", m[1], "", nil); res.StatusCode != 401 {
		t.Fatalf("export with revoked token: %d", res.StatusCode)
	}
	if res := a.do(c, "GET", "/admin/account", nil, nil); !strings.Contains(res.body, "revoked") || !strings.Contains(res.body, "my script") {
		t.Fatalf("account page")
	}
}

// Behind HTTPS (BASE_URL https://...) the session cookie is Secure.
func TestSecureCookieBehindHTTPS(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	if _, err := a.accounts.CreateAdmin(context.Background(), "r@example.org", "secret-password"); err != nil {
		t.Fatal(err)
	}
	h := web.New(a.store, a.accounts, web.Config{BaseURL: "https://closer.example.org"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	form := url.Values{"email": {"r@example.org"}, "password": {"secret-password"}}
	req := httptest.NewRequest("POST", "https://closer.example.org/admin/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	cks := rec.Result().Cookies()
	// The session and the known-browser cookie (admin_login.go).
	if rec.Code != http.StatusSeeOther || len(cks) != 2 || cks[0].Name != "closer_session" || cks[1].Name != "closer_device" {
		t.Fatalf("login behind https: %d %+v", rec.Code, cks)
	}
	for _, ck := range cks {
		if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
			t.Fatalf("login behind https: %+v", ck)
		}
	}
}
