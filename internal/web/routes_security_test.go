package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
)

// route is one method on one pattern of the router.
type route struct{ method, pattern string }

// routesOf walks the app's router: every route, found by the router
// itself, so a route added later is covered without editing this file.
func routesOf(t *testing.T, a *app) []route {
	t.Helper()
	mux, ok := a.srv.Config.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the router is a %T, not chi.Routes", a.srv.Config.Handler)
	}
	var rs []route
	err := chi.Walk(mux, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		rs = append(rs, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rs, func(x, y route) int { return strings.Compare(x.pattern+" "+x.method, y.pattern+" "+y.method) })
	if len(rs) < 20 {
		t.Fatalf("walked only %d routes: %v", len(rs), rs)
	}
	return rs
}

// anyMethod lists the patterns registered for every method (chi's Handle):
// a route's set of methods is compared with this to tell them apart.
func anyMethod(rs []route) map[string]bool {
	n := map[string]int{}
	for _, r := range rs {
		n[r.pattern]++
	}
	out := map[string]bool{}
	for p, k := range n {
		if k >= 9 { // CONNECT DELETE GET HEAD OPTIONS PATCH POST PUT TRACE
			out[p] = true
		}
	}
	return out
}

// securityFixture is a study with items and a participant, an admin with an
// API token, and their real ids for the routes' URL parameters.
type securityFixture struct {
	*app
	admin       *http.Client
	participant string // the participant's token (cookie and bearer)
	params      map[string]string
}

func newSecurityFixture(t *testing.T) *securityFixture {
	t.Helper()
	a := newApp(t)
	ctx := context.Background()
	st := a.study("s", 4, 3, "open")
	p, token, err := a.store.CreateParticipant(ctx, st.ID, "worker-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Next(ctx, p.ID); err != nil { // so the participant holds a question
		t.Fatal(err)
	}
	admin := a.admin()
	adm, err := a.accounts.FirstAdmin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.accounts.CreateAPIToken(ctx, adm.ID, "script")
	if err != nil {
		t.Fatal(err)
	}
	items, err := a.store.ListItems(ctx, st.ID)
	if err != nil || len(items) == 0 {
		t.Fatal(items, err)
	}
	var sessionID int64
	if err := a.pool.QueryRow(ctx, `SELECT id FROM sessions`).Scan(&sessionID); err != nil {
		t.Fatal(err)
	}
	return &securityFixture{app: a, admin: admin, participant: token, params: map[string]string{
		"slug": st.Slug, "participant": p.PublicID, "sha256": items[0].SHA256,
		"tokens/{id}": fmt.Sprint(tok.ID), "sessions/{id}": fmt.Sprint(sessionID),
		"account": fmt.Sprint(adm.ID), "token": "not-an-invitation",
	}}
}

var urlParamRE = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// path fills a pattern's URL parameters with real values. {id} is named by
// the segment before it (tokens/{id}, sessions/{id}). A parameter without a
// value fails the test: give it one in newSecurityFixture.
func (f *securityFixture) path(t *testing.T, pattern string) string {
	t.Helper()
	p := urlParamRE.ReplaceAllStringFunc(pattern, func(m string) string {
		name := urlParamRE.FindStringSubmatch(m)[1]
		v, ok := f.params[name]
		if !ok {
			i := strings.Index(pattern, m)
			prev := pattern[:i]
			prev = prev[strings.LastIndex(strings.TrimSuffix(prev, "/"), "/")+1:]
			v, ok = f.params[prev+"{"+name+"}"]
		}
		if !ok {
			t.Fatalf("route %s: no real value for {%s}; add one to newSecurityFixture", pattern, name)
		}
		return url.PathEscape(v)
	})
	return strings.TrimSuffix(p, "*") + map[bool]string{true: "app.css", false: ""}[strings.HasSuffix(p, "*")]
}

// fingerprint digests every row of every table, so a test can tell that a
// refused request changed nothing at all.
func (f *securityFixture) fingerprint(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	rows, err := f.pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tb := range tables {
		var sum string
		q := fmt.Sprintf(`SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM %q x`, tb)
		if err := f.pool.QueryRow(ctx, q).Scan(&sum); err != nil {
			t.Fatal(tb, err)
		}
		fmt.Fprintf(&b, "%s=%s\n", tb, sum)
	}
	return b.String()
}

// bait is a form a state-changing route would act on if it let the request
// through: it confirms deletions, names things, excludes, logs in.
var bait = url.Values{
	"confirm": {"yes"}, "name": {"evil"}, "title": {"Evil"}, "slug": {"evil"}, "excluded": {"1"},
	"questions_per_participant": {"5"}, "status": {"open"}, "design": {"random"},
	"email": {"r@example.org"}, "password": {"secret-password"}, "external_id": {"evil"},
}

// isAdminRoute says whether a pattern is an admin page that must need an
// admin's session: everything under /admin except logging in and out.
func isAdminRoute(r route) bool {
	if r.pattern != "/admin" && !strings.HasPrefix(r.pattern, "/admin/") {
		return false
	}
	switch r.method + " " + r.pattern {
	case "GET /admin/login", "POST /admin/login", "POST /admin/logout", "GET /admin/login/oidc", "GET /admin/login/oidc/callback":
		return false
	}
	return true
}

// Every admin route, for every method it has, refuses an anonymous request
// and one carrying a participant's credentials (their cookie, their bearer
// token, or their token passed off as a session), and changes nothing.
func TestEveryAdminRouteNeedsAnAdmin(t *testing.T) {
	t.Parallel()
	f := newSecurityFixture(t)
	rs := routesOf(t, f.app)
	before := f.fingerprint(t)
	credentials := map[string]map[string]string{
		"anonymous":                       nil,
		"participant cookie":              {"Cookie": "closer_participant=" + f.participant},
		"participant bearer token":        {"Authorization": "Bearer " + f.participant},
		"participant token as a session":  {"Cookie": "closer_session=" + f.participant},
		"participant cookie and bearer":   {"Cookie": "closer_participant=" + f.participant, "Authorization": "Bearer " + f.participant},
		"an empty session cookie":         {"Cookie": "closer_session="},
		"a session cookie of another app": {"Cookie": "closer_session=" + strings.Repeat("A", 43)},
	}
	checked := 0
	for _, r := range rs {
		if !isAdminRoute(r) {
			continue
		}
		checked++
		path := f.path(t, r.pattern)
		for who, h := range credentials {
			var form url.Values
			if r.method != http.MethodGet && r.method != http.MethodHead {
				form = bait
			}
			res := f.do(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
				r.method, path, form, h)
			switch r.method {
			case http.MethodGet, http.MethodHead:
				if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/admin/login?next=") {
					t.Errorf("%s %s (%s): %d %q, want 303 to the login page", r.method, path, who, res.StatusCode, res.Header.Get("Location"))
				}
			default:
				if res.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s %s (%s): %d, want 401", r.method, path, who, res.StatusCode)
				}
			}
		}
	}
	if checked < 25 {
		t.Fatalf("only %d admin routes found", checked)
	}
	t.Logf("%d admin routes, each refused to %d kinds of credentials", checked, len(credentials))
	if after := f.fingerprint(t); after != before {
		t.Fatalf("refused requests changed the database:\nbefore\n%s\nafter\n%s", before, after)
	}
	// With the admin's session the same GETs get past the login check (so
	// the refusals above are that check): none is sent to the login page.
	for _, r := range rs {
		if isAdminRoute(r) && r.method == http.MethodGet {
			res := f.do(f.admin, r.method, f.path(t, r.pattern), nil, nil)
			if res.StatusCode == http.StatusUnauthorized || strings.HasPrefix(res.Header.Get("Location"), "/admin/login") {
				t.Errorf("GET %s as the admin: %d %s", r.pattern, res.StatusCode, res.Header.Get("Location"))
			}
		}
	}
}

// Every state-changing route outside the bearer-token API refuses a
// cross-origin browser request with 403 and changes nothing, even when the
// browser holds an admin's session and a participant's cookie.
func TestEveryStateChangeRefusesCrossOrigin(t *testing.T) {
	t.Parallel()
	f := newSecurityFixture(t)
	rs := routesOf(t, f.app)
	agnostic := anyMethod(rs)
	before := f.fingerprint(t)
	u, _ := url.Parse(f.srv.URL)
	f.admin.Jar.SetCookies(u, []*http.Cookie{{Name: "closer_participant", Value: f.participant, Path: "/"}})
	crossOrigin := []map[string]string{
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
	}
	checked := 0
	for _, r := range rs {
		switch r.method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			continue
		}
		if strings.HasPrefix(r.pattern, "/api/") {
			continue
		}
		path := f.path(t, r.pattern)
		for _, h := range crossOrigin {
			res := f.do(f.admin, r.method, path, bait, h)
			if agnostic[r.pattern] {
				// A handler mounted for every method (static files) is
				// read-only: it may answer, but must change nothing.
				if res.StatusCode >= 500 {
					t.Errorf("%s %s cross-origin %v: %d", r.method, path, h, res.StatusCode)
				}
				continue
			}
			checked++
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s cross-origin %v: %d, want 403", r.method, path, h, res.StatusCode)
			}
		}
		if after := f.fingerprint(t); after != before {
			t.Fatalf("cross-origin %s %s changed the database:\nbefore\n%s\nafter\n%s", r.method, path, before, after)
		}
	}
	if checked < 3*15 {
		t.Fatalf("only %d cross-origin requests checked", checked)
	}
	t.Logf("%d cross-origin requests refused; read-only handlers for any method: %v", checked, agnostic)
	// The admin's session was not touched: it still works.
	if res := f.do(f.admin, "GET", "/admin", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the admin after the cross-origin requests: %d", res.StatusCode)
	}
}
