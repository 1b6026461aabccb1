package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
)

// badValue is text PostgreSQL cannot store, in the shapes a request carries it.
type badValue struct {
	name string
	raw  string // the string itself (form and query values, JSON bodies)
	path string // escaped for a URL path
	json string // a JSON string literal
}

var badValues = []badValue{
	{name: "NUL", raw: "a\x00b", path: "a%00b", json: `"a\u0000b"`},
	{name: "invalid UTF-8", raw: "a\xffb", path: "a%FFb", json: "\"a\xffb\""},
}

// stored counts the rows of every table a request could write to.
const stored = `SELECT (SELECT count(*) FROM studies) + (SELECT count(*) FROM items) +
	(SELECT count(*) FROM participants) + (SELECT count(*) FROM questions) +
	(SELECT count(*) FROM answers) + (SELECT count(*) FROM api_tokens) +
	(SELECT count(*) FROM sessions) + (SELECT count(*) FROM admins)`

// Text that PostgreSQL cannot store (a NUL character, invalid UTF-8) in any
// place a request carries text is refused with a 4xx that says why, logs no
// error and stores nothing: URL path parameters, query parameters, form
// fields, JSON strings, multipart fields, uploaded file names and imported
// CSV cells (the last three through the store's safety net); an image
// upload refused so ends, as any, in a redirect to the study page that
// says why.
func TestBadTextIsRefused(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	a, logs := newAppOn(t, pool, web.Config{})
	a.study("txt", 3, 5, "open")
	admin := a.admin()
	ctx := context.Background()
	adminRow, err := a.accounts.Authenticate(ctx, "r@example.org", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	adminToken, _, err := a.accounts.CreateAPIToken(ctx, adminRow.ID, "scripts")
	if err != nil {
		t.Fatal(err)
	}
	participant := a.join("txt", "")
	// A browser participant holding a question.
	browser := a.client()
	if res := a.do(browser, "POST", "/s/txt/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(browser, "GET", "/s/txt/q", nil, nil); res.StatusCode != http.StatusOK || !questionIDRE.MatchString(res.body) {
		t.Fatalf("question: %d %s", res.StatusCode, res.body)
	}
	bundle := a.do(admin, "GET", "/admin/studies/txt/bundle.zip", nil, nil)
	if bundle.StatusCode != http.StatusOK {
		t.Fatalf("bundle: %d", bundle.StatusCode)
	}
	png := string(demo.Items()[4].Data) // not in the study yet
	cases := []struct {
		name string
		send func(b badValue) response
	}{
		{"slug in the landing path", func(b badValue) response { return a.do(a.client(), "GET", "/s/"+b.path, nil, nil) }},
		{"external id in the landing query", func(b badValue) response {
			return a.do(a.client(), "GET", "/s/txt?PROLIFIC_PID="+url.QueryEscape(b.raw), nil, nil)
		}},
		{"slug in the start path", func(b badValue) response { return a.do(a.client(), "POST", "/s/"+b.path+"/start", url.Values{}, nil) }},
		{"external id in the start form", func(b badValue) response {
			return a.do(a.client(), "POST", "/s/txt/start", url.Values{"external_id": {b.raw}}, nil)
		}},
		{"name of a start form field", func(b badValue) response {
			return a.do(a.client(), "POST", "/s/txt/start", url.Values{b.raw: {"x"}}, nil)
		}},
		{"question id in the answer form", func(b badValue) response {
			return a.do(browser, "POST", "/s/txt/answer", url.Values{"question_id": {b.raw}, "closer": {"0"}}, nil)
		}},
		{"slug in the question path", func(b badValue) response { return a.do(browser, "GET", "/s/"+b.path+"/q", nil, nil) }},
		{"slug in the done path", func(b badValue) response { return a.do(browser, "GET", "/s/"+b.path+"/done", nil, nil) }},
		{"next in the login query", func(b badValue) response {
			return a.do(a.client(), "GET", "/admin/login?next="+url.QueryEscape("/"+b.raw), nil, nil)
		}},
		{"e-mail in the login form", func(b badValue) response {
			return a.do(a.client(), "POST", "/admin/login", url.Values{"email": {b.raw}, "password": {"secret-password"}}, nil)
		}},
		{"password in the login form", func(b badValue) response {
			return a.do(a.client(), "POST", "/admin/login", url.Values{"email": {"r@example.org"}, "password": {b.raw}}, nil)
		}},
		{"slug in the new study form", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies", studyForm(b.raw, "T"), nil)
		}},
		{"title in the new study form", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies", studyForm("fresh", b.raw), nil)
		}},
		{"title in the edit study form", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies/txt", studyForm("txt", b.raw), nil)
		}},
		{"slug in the study path", func(b badValue) response { return a.do(admin, "GET", "/admin/studies/"+b.path, nil, nil) }},
		{"slug in the delete path", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies/"+b.path+"/delete", url.Values{"confirm": {"yes"}}, nil)
		}},
		{"token name", func(b badValue) response {
			return a.do(admin, "POST", "/admin/account/tokens", url.Values{"name": {b.raw}}, nil)
		}},
		{"token id in the revoke path", func(b badValue) response {
			return a.do(admin, "POST", "/admin/account/tokens/"+b.path+"/revoke", url.Values{}, nil)
		}},
		{"participant id in the exclude path", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies/txt/participants/"+b.path+"/exclude", url.Values{"excluded": {"1"}}, nil)
		}},
		{"method in the dashboard settings", func(b badValue) response {
			return a.do(admin, "POST", "/admin/studies/txt/dashboard/settings", url.Values{"method": {b.raw},
				"min_new_answers": {"1"}, "max_age_minutes": {"1"}, "dim": {"2"}, "clusters": {"2"}}, nil)
		}},
		{"notice in the dashboard query", func(b badValue) response {
			return a.do(admin, "GET", "/admin/studies/txt/dashboard?msg="+url.QueryEscape(b.raw), nil, nil)
		}},
		{"slug in the dashboard path", func(b badValue) response {
			return a.do(admin, "GET", "/admin/studies/"+b.path+"/dashboard", nil, nil)
		}},
		{"slug in the export path", func(b badValue) response {
			return a.do(admin, "GET", "/admin/studies/"+b.path+"/triplets.csv", nil, nil)
		}},
		{"image hash", func(b badValue) response { return a.do(a.client(), "GET", "/img/"+b.path, nil, nil) }},
		{"API: slug in the join path", func(b badValue) response {
			return a.api("POST", "/api/v1/studies/"+b.path+"/participants", "", "", nil)
		}},
		{"API: external id in the join body", func(b badValue) response {
			return a.api("POST", "/api/v1/studies/txt/participants", "", `{"external_id": `+b.json+`}`, nil)
		}},
		{"API: a key of the join body", func(b badValue) response {
			return a.api("POST", "/api/v1/studies/txt/participants", "", `{`+b.json+`: "x"}`, nil)
		}},
		{"API: the join body sent as a form", func(b badValue) response {
			// curl -d sends JSON with a form's Content-Type.
			req, _ := http.NewRequest("POST", a.srv.URL+"/api/v1/studies/txt/participants",
				strings.NewReader(`{"external_id": `+b.json+`}`))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return a.send(http.DefaultClient, req)
		}},
		{"API: slug in the next path", func(b badValue) response {
			return a.api("GET", "/api/v1/studies/"+b.path+"/next", participant.Token, "", nil)
		}},
		{"API: a query parameter of next", func(b badValue) response {
			return a.api("GET", "/api/v1/studies/txt/next?x="+url.QueryEscape(b.raw), participant.Token, "", nil)
		}},
		{"API: question id in the answer body", func(b badValue) response {
			return a.api("POST", "/api/v1/answers", participant.Token, `{"question_id": `+b.json+`, "closer": 0}`, nil)
		}},
		{"API: slug in the export path", func(b badValue) response {
			return a.api("GET", "/api/v1/studies/"+b.path+"/triplets.csv", adminToken, "", nil)
		}},
		{"slug field of a triplet import", func(b badValue) response {
			return a.upload(admin, "/admin/import/triplets", map[string]string{"slug": b.raw, "title": "T"},
				[]byte("anchor,closer,farther\n0,1,2\n"), "t.csv")
		}},
		{"title field of a triplet import", func(b badValue) response {
			return a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "imp", "title": b.raw},
				[]byte("anchor,closer,farther\n0,1,2\n"), "t.csv")
		}},
		{"item id in an imported triplet CSV", func(b badValue) response {
			return a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "imp", "title": "T"},
				[]byte("anchor,closer,farther\n"+b.raw+",1,2\n"), "t.csv")
		}},
		{"participant in an imported triplet CSV", func(b badValue) response {
			return a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "imp", "title": "T"},
				[]byte("anchor,closer,farther,participant\n0,1,2,"+b.raw+"\n"), "t.csv")
		}},
		{"slug field of a bundle import", func(b badValue) response {
			return a.upload(admin, "/admin/import/bundle", map[string]string{"slug": b.raw}, []byte(bundle.body), "b.zip")
		}},
		{"file name of an uploaded image", func(b badValue) response {
			// Not followed: a browser upload refused whole redirects.
			body, ctype := multipartBody("files", b.raw+".png", []byte(png), nil)
			req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/txt/items", body)
			req.Header.Set("Content-Type", ctype)
			return a.send(admin, req)
		}},
	}
	for _, b := range badValues { //nolint:paralleltest // subtests check what one shared app stores
		for _, c := range cases {
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				before := a.count(stored)
				errorsBefore := len(logs.lines("ERROR"))
				res := c.send(b)
				_, viaStore := otherReasons[c.name]
				viaStore = viaStore || strings.Contains(c.name, "import") || strings.Contains(c.name, "upload")
				t.Logf("%d %s", res.StatusCode, noticeRE.FindString(res.body))
				if to := res.Header.Get("Location"); redirected[c.name] && res.StatusCode == http.StatusSeeOther {
					// A browser upload refused whole ends in a redirect to
					// the study page, which says why (TestUploadRefusalsRedirect).
					if res = a.do(admin, "GET", to, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="upload-refused"`) {
						t.Errorf("redirected to %q: %d without the refusal: %s", to, res.StatusCode, noticeRE.FindAllString(res.body, -1))
						return
					}
				} else if res.StatusCode < 400 || res.StatusCode >= 500 || (!viaStore && res.StatusCode != http.StatusBadRequest) {
					// Multipart bodies are their handlers' to read: what they
					// miss, the store's safety net refuses (422); the rest is
					// refused where it comes in (400).
					t.Errorf("status %d, want 400 (4xx for multipart): %.300s", res.StatusCode, res.body)
					return
				}
				reason := reasonRE
				if r, ok := otherReasons[c.name]; ok {
					reason = r
				}
				if !reason.MatchString(res.body) {
					t.Errorf("%d without the reason: %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
				}
				if after := a.count(stored); after != before {
					t.Errorf("%d rows stored", after-before)
				}
				if l := logs.lines("ERROR"); len(l) > errorsBefore {
					t.Errorf("logged %s", l[errorsBefore:])
				}
			})
		}
	}
}

// reasonRE finds the reason in a refusal.
var reasonRE = regexp.MustCompile(`NUL|UTF-8`)

// otherReasons are the refusals whose reason is another rule that the bad
// text breaks first: a slug's shape, and Go's multipart reader refusing a
// NUL in a header.
var otherReasons = map[string]*regexp.Regexp{
	"slug field of a triplet import": slugRule,
	"slug field of a bundle import":  slugRule,
	"file name of an uploaded image": regexp.MustCompile(`NUL|UTF-8|malformed MIME header`),
}

// redirected are the browser uploads whose refusal is a 303 to the study
// page showing the reason, not a 4xx.
var redirected = map[string]bool{"file name of an uploaded image": true}

var slugRule = regexp.MustCompile(`the URL slug .* must be 1 to 64 lower-case letters`)

// noticeRE finds the messages on a page, for failures.
var noticeRE = regexp.MustCompile(`<(p|div)[^>]*>[^<]*</(p|div)>|\{"error".*`)

// studyForm is a complete study form.
func studyForm(slug, title string) url.Values {
	return url.Values{"slug": {slug}, "title": {title}, "instructions": {"Pick."}, "debrief": {"Thanks."},
		"status": {"draft"}, "design": {"random"}, "questions_per_participant": {"5"}}
}
