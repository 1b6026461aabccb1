package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

// wantNeeds is this test's own statement of what each route needs,
// written apart from web's routeNeeds so that a weakened declaration fails
// here: a new route needs a line in both.
var wantNeeds = map[string]string{
	"GET /healthz":                                                  "public",
	"* /static/*":                                                   "public",
	"GET /img/{sha256}":                                             "public",
	"GET /":                                                         "public",
	"GET /s/{slug}":                                                 "public",
	"POST /s/{slug}/start":                                          "public",
	"GET /s/{slug}/declined":                                        "public",
	"GET /s/{slug}/q":                                               "public",
	"POST /s/{slug}/answer":                                         "public",
	"GET /s/{slug}/done":                                            "public",
	"GET /admin/login":                                              "public",
	"POST /admin/login":                                             "public",
	"POST /admin/logout":                                            "public",
	"GET /admin/login/oidc":                                         "public",
	"GET /admin/login/oidc/callback":                                "public",
	"GET /invite/{token}":                                           "public",
	"POST /invite/{token}":                                          "public",
	"POST /api/v1/answers":                                          "public",
	"GET /api/v1/studies/{slug}/next":                               "public",
	"POST /api/v1/studies/{slug}/participants":                      "public",
	"GET /api/v1/studies/{slug}/triplets.csv":                       "viewer",
	"POST /api/v1/studies/{slug}/status":                            "editor",
	"POST /api/v1/studies/{slug}/participants/erase":                "editor",
	"GET /admin":                                                    "account",
	"GET /admin/studies/new":                                        "account",
	"POST /admin/studies":                                           "account",
	"GET /admin/account":                                            "account",
	"POST /admin/account/tokens":                                    "account",
	"POST /admin/account/tokens/{id}/revoke":                        "account",
	"POST /admin/account/sessions/{id}/revoke":                      "account",
	"POST /admin/account/sessions/revoke-others":                    "account",
	"GET /admin/import":                                             "account",
	"POST /admin/import/bundle":                                     "account",
	"POST /admin/import/triplets":                                   "account",
	"POST /admin/account/admins":                                    "site",
	"GET /admin/audit.csv":                                          "site",
	"GET /admin/studies/{slug}":                                     "viewer",
	"GET /admin/studies/{slug}/qr.png":                              "viewer",
	"GET /admin/studies/{slug}/dashboard":                           "viewer",
	"GET /admin/studies/{slug}/dashboard/status":                    "viewer",
	"GET /admin/studies/{slug}/triplets.csv":                        "viewer",
	"GET /admin/studies/{slug}/embedding.csv":                       "viewer",
	"GET /admin/studies/{slug}/kernel-pca.csv":                      "viewer",
	"GET /admin/studies/{slug}/kernel.csv":                          "viewer",
	"GET /admin/studies/{slug}/trials.csv":                          "viewer",
	"GET /admin/studies/{slug}/people":                              "viewer",
	"GET /admin/studies/{slug}/history":                             "viewer",
	"GET /admin/studies/{slug}/edit":                                "editor",
	"GET /admin/studies/{slug}/participants/erase":                  "editor",
	"POST /admin/studies/{slug}/participants/erase":                 "editor",
	"POST /admin/studies/{slug}/retention":                          "editor",
	"POST /admin/studies/{slug}":                                    "editor",
	"POST /admin/studies/{slug}/status":                             "editor",
	"POST /admin/studies/{slug}/preview":                            "editor",
	"POST /admin/studies/{slug}/previews/delete":                    "editor",
	"POST /admin/studies/{slug}/items":                              "editor",
	"POST /admin/studies/{slug}/texts":                              "editor",
	"POST /admin/studies/{slug}/gold":                               "editor",
	"POST /admin/studies/{slug}/dashboard/recompute":                "editor",
	"POST /admin/studies/{slug}/estimate":                           "editor",
	"POST /admin/studies/{slug}/dashboard/cancel":                   "editor",
	"POST /admin/studies/{slug}/dashboard/settings":                 "editor",
	"POST /admin/studies/{slug}/participants/{participant}/exclude": "editor",
	"GET /admin/studies/{slug}/participants.csv":                    "editor",
	"GET /admin/studies/{slug}/bundle.zip":                          "editor",
	"POST /admin/studies/{slug}/delete":                             "owner",
	"POST /admin/studies/{slug}/people":                             "owner",
	"POST /admin/studies/{slug}/people/{account}/remove":            "owner",
}

// Every route of the router declares what it needs in web's routeNeeds,
// and routeNeeds names no route the router lacks: a route added later
// without a declared role fails here (and authorize refuses it with 500).
func TestEveryRouteDeclaresItsRole(t *testing.T) {
	t.Parallel()
	f := newSecurityFixture(t)
	rs := routesOf(t, f.app)
	agnostic := anyMethod(rs)
	seen := map[string]bool{}
	for _, r := range rs {
		method := r.method
		if agnostic[r.pattern] {
			method = "*"
		}
		key := method + " " + r.pattern
		if seen[key] {
			continue
		}
		seen[key] = true
		need, ok := web.RouteNeed(method, r.pattern)
		if !ok {
			t.Errorf("%s has no declared role: add it to routeNeeds in internal/web/roles.go", key)
			continue
		}
		if want, ok := wantNeeds[key]; !ok {
			t.Errorf("%s is not in this test's wantNeeds: add it", key)
		} else if need != want {
			t.Errorf("%s is declared %s, want %s", key, need, want)
		}
		if isAdminRoute(r) && need == "public" {
			t.Errorf("%s is an admin route declared public", key)
		}
	}
	if len(seen) != len(wantNeeds) {
		t.Errorf("wantNeeds names %d routes, the router has %d", len(wantNeeds), len(seen))
	}
	if len(seen) != web.RouteNeedCount() {
		t.Errorf("routeNeeds declares %d routes, the router has %d: remove the lines of routes that are gone", web.RouteNeedCount(), len(seen))
	}
}

// principal is one kind of caller: a browser with a session (or none), or
// extra headers (a participant's credentials, an API token).
type principal struct {
	name   string
	client *http.Client
	header map[string]string
	// role in the fixture's study; site: a site administrator; account:
	// logged in at all.
	role    study.Role
	site    bool
	account bool
}

// labsFixture is two labs on one server: lab A's study (the security
// fixture's) with an owner, an editor and a viewer; lab B's owner with a
// study of their own; the site administrator; a participant of lab A's
// study; and an API token of each account.
type labsFixture struct {
	*securityFixture
	principals []principal
	tokens     map[string]string // account name -> API token
	studyA     study.Study
}

func newLabsFixture(t *testing.T) *labsFixture {
	t.Helper()
	f := newSecurityFixture(t)
	ctx := context.Background()
	stA, err := f.store.StudyBySlug(ctx, f.params["slug"])
	if err != nil {
		t.Fatal(err)
	}
	stB := f.study("lab-b-study", 4, 3, "open")
	// The participant of lab A's study answers, so exports have a row
	// with their external id.
	var pid int64
	if err := f.pool.QueryRow(ctx, `SELECT id FROM participants WHERE public_id = $1`, f.params["participant"]).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	pr, err := f.store.Next(ctx, pid)
	if err != nil || pr.Question == nil {
		t.Fatal(pr, err)
	}
	if _, err := f.store.Answer(ctx, pid, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	site, err := f.accounts.FirstAdmin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lf := &labsFixture{securityFixture: f, tokens: map[string]string{}, studyA: stA}
	lf.principals = []principal{
		{name: "anonymous", client: f.client()},
		{name: "participant", client: f.client(), header: map[string]string{
			"Cookie": "closer_participant=" + f.participant, "Authorization": "Bearer " + f.participant}},
		{name: "site administrator", client: f.admin, role: study.RoleOwner, site: true, account: true},
	}
	tok, _, err := f.accounts.CreateAPIToken(ctx, site.ID, "site script")
	if err != nil {
		t.Fatal(err)
	}
	lf.tokens["site administrator"] = tok
	for _, who := range []struct {
		name string
		role study.Role
		on   int64
	}{
		{"viewer", study.RoleViewer, stA.ID},
		{"editor", study.RoleEditor, stA.ID},
		{"owner", study.RoleOwner, stA.ID},
		{"owner of another study", study.RoleOwner, stB.ID},
	} {
		email := strings.ReplaceAll(who.name, " ", "-") + "@lab.example"
		a, err := f.accounts.CreateResearcher(ctx, email, "researcher-pw")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.accounts.GrantRole(ctx, who.on, a.ID, who.role, site.ID); err != nil {
			t.Fatal(err)
		}
		c := f.client()
		if res := f.login(c, email, "researcher-pw", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s's login: %d", who.name, res.StatusCode)
		}
		role := who.role
		if who.on != stA.ID {
			role = study.RoleNone
		}
		lf.principals = append(lf.principals, principal{name: who.name, client: c, role: role, account: true})
		tok, _, err := f.accounts.CreateAPIToken(ctx, a.ID, "script")
		if err != nil {
			t.Fatal(err)
		}
		lf.tokens[who.name] = tok
	}
	lf.principals = append(lf.principals, principal{name: "owner's API token on pages", client: f.client(),
		header: map[string]string{"Authorization": "Bearer " + lf.tokens["owner"]}})
	// A spare session of the site administrator, so that revoking the
	// {id} of the route does not log the test's one out.
	spare := f.client()
	if res := f.login(spare, "r@example.org", "secret-password", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatal("spare login", res.StatusCode)
	}
	var sessionID int64
	if err := f.pool.QueryRow(ctx, `SELECT max(id) FROM sessions`).Scan(&sessionID); err != nil {
		t.Fatal(err)
	}
	f.params["sessions/{id}"] = fmt.Sprint(sessionID)
	return lf
}

// expect is what p should get from a route that needs need: "ok",
// "login" (303 to the login page for GET, 401 otherwise), "forbidden"
// (403) or "not found" (404, as for a study that does not exist).
func (p principal) expect(need string) string {
	if !p.account {
		return "login"
	}
	switch need {
	case "account":
		return "ok"
	case "site":
		if p.site {
			return "ok"
		}
		return "forbidden"
	}
	want := map[string]study.Role{"viewer": study.RoleViewer, "editor": study.RoleEditor, "owner": study.RoleOwner}[need]
	switch {
	case p.role == study.RoleNone:
		return "not found"
	case p.role < want:
		return "forbidden"
	}
	return "ok"
}

// outcomeOf classifies a response as expect names them.
func outcomeOf(method string, res response) string {
	switch {
	case res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/admin/login"):
		if method == http.MethodGet {
			return "login"
		}
		return "login via redirect"
	case res.StatusCode == http.StatusUnauthorized:
		if method != http.MethodGet {
			return "login"
		}
		return "401"
	case res.StatusCode == http.StatusForbidden:
		return "forbidden"
	case res.StatusCode == http.StatusNotFound && strings.Contains(res.body, "study not found"):
		return "not found"
	}
	return "ok"
}

// Every admin route against every kind of caller: anonymous, a
// participant, a viewer, an editor and the owner of the study, the owner
// of another lab's study, the site administrator, and an API token on the
// pages. Refused requests change nothing; allowed ones get past the check
// (a state-changing one is sent an empty form, which its handler refuses
// or acts on harmlessly).
func TestEveryRouteAgainstEveryRole(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	rs := routesOf(t, f.app)
	before := f.fingerprint(t)
	type call struct {
		r    route
		p    principal
		want string
	}
	var allowed []call
	checked := 0
	for _, r := range rs {
		need, ok := wantNeeds[r.method+" "+r.pattern]
		if !ok || need == "public" || strings.HasPrefix(r.pattern, "/api/") {
			continue // undeclared: TestEveryRouteDeclaresItsRole; the API: TestAPITokensAgainstEveryRole
		}
		path := f.path(t, r.pattern)
		for _, p := range f.principals {
			want := p.expect(need)
			if want == "ok" {
				allowed = append(allowed, call{r, p, want})
				continue
			}
			var form url.Values
			if r.method != http.MethodGet {
				form = bait
			}
			checked++
			if got := outcomeOf(r.method, f.do(p.client, r.method, path, form, p.header)); got != want {
				t.Errorf("%s %s as %s (needs %s): %s, want %s", r.method, path, p.name, need, got, want)
			}
		}
	}
	if after := f.fingerprint(t); after != before {
		t.Fatalf("refused requests changed the database:\nbefore\n%s\nafter\n%s", before, after)
	}
	// GETs first, then the state changes; the owner's and the site
	// administrator's last, so that nobody loses a role before being checked.
	for pass := range 2 {
		for _, c := range allowed {
			if (c.r.method == http.MethodGet) != (pass == 0) {
				continue
			}
			var form url.Values
			if c.r.method != http.MethodGet {
				form = url.Values{}
			}
			res := f.do(c.p.client, c.r.method, f.path(t, c.r.pattern), form, c.p.header)
			checked++
			if got := outcomeOf(c.r.method, res); got != "ok" {
				t.Errorf("%s %s as %s: %s (%d), want it allowed", c.r.method, c.r.pattern, c.p.name, got, res.StatusCode)
			}
		}
	}
	t.Logf("%d requests of %d principals checked", checked, len(f.principals))
}

// Two labs on one server: neither sees the other's studies in the list,
// and a viewer's study page, dashboard and exports show no external ids.
func TestLabsSeeOnlyTheirStudies(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	by := map[string]principal{}
	for _, p := range f.principals {
		by[p.name] = p
	}
	list := func(who string) string {
		res := f.do(by[who].client, "GET", "/admin", nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s's study list: %d", who, res.StatusCode)
		}
		return res.body
	}
	if l := list("owner"); !strings.Contains(l, f.studyA.Title) || strings.Contains(l, "Study lab-b-study") {
		t.Errorf("lab A's owner's list: want study %q and not lab B's", f.studyA.Title)
	}
	if l := list("owner of another study"); strings.Contains(l, f.studyA.Title) || !strings.Contains(l, "Study lab-b-study") {
		t.Errorf("lab B's owner's list: want its study and not lab A's")
	}
	if l := list("site administrator"); !strings.Contains(l, f.studyA.Title) || !strings.Contains(l, "Study lab-b-study") {
		t.Errorf("the site administrator's list: want both studies")
	}
	// A researcher does not see the server's accounts.
	if res := f.do(by["owner"].client, "GET", "/admin/account", nil, nil); strings.Contains(res.body, "viewer@lab.example") {
		t.Error("a researcher's account page lists other accounts")
	}
	// Refusing another lab's participants by its slug: lab B's study is not there for lab A.
	csv := func(who string) string {
		res := f.do(by[who].client, "GET", "/admin/studies/"+f.studyA.Slug+"/triplets.csv", nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s's triplets.csv: %d %s", who, res.StatusCode, res.body)
		}
		return res.body
	}
	for _, page := range []string{"", "/dashboard"} {
		path := "/admin/studies/" + f.studyA.Slug + page
		if res := f.do(by["editor"].client, "GET", path, nil, nil); !strings.Contains(res.body, "worker-1") {
			t.Errorf("the editor's %s lacks the external id", path)
		}
		if res := f.do(by["viewer"].client, "GET", path, nil, nil); res.StatusCode != http.StatusOK || strings.Contains(res.body, "worker-1") {
			t.Errorf("the viewer's %s: %d, external id shown %t", path, res.StatusCode, strings.Contains(res.body, "worker-1"))
		}
	}
	if !strings.Contains(csv("editor"), "worker-1") {
		t.Error("the editor's triplets.csv lacks the external id")
	}
	if v := csv("viewer"); strings.Contains(v, "worker-1") || strings.Count(v, "\n") < 2 {
		t.Errorf("the viewer's triplets.csv: %q, want its rows without the external id", v)
	}
}

// apiToken is one API token and what it should be able to do in the
// fixture's study.
type apiToken struct {
	name  string
	token string
	role  study.Role // its account's role in the study
	scope study.TokenScope
}

// expect is what the token should get from an API route that needs need.
func (k apiToken) expect(studyID int64, need string) string {
	want := map[string]study.Role{"viewer": study.RoleViewer, "editor": study.RoleEditor, "owner": study.RoleOwner}[need]
	switch {
	case k.token == "" || k.role == study.RoleNone && k.name == "participant":
		return "login"
	case k.role == study.RoleNone || !k.scope.Covers(studyID):
		return "not found"
	case need == "viewer" && !k.scope.Read, need == "editor" && !k.scope.Write, need == "owner", k.role < want:
		return "forbidden"
	}
	return "ok"
}

// Every researchers' API route against every account's token and every
// token scope: a token acts for its account (lab B's finds nothing of lab
// A's), only in its studies, only with its rights; identifying columns
// only for an editor's or owner's token allowed to export them. Refused
// requests change nothing.
func TestAPITokensAgainstEveryRole(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	ctx := context.Background()
	owner, err := f.accounts.AdminByEmail(ctx, "owner@lab.example")
	if err != nil {
		t.Fatal(err)
	}
	other := f.study("lab-a-other", 3, 3, "open")
	if err := f.accounts.GrantRole(ctx, other.ID, owner.ID, study.RoleOwner, owner.ID); err != nil {
		t.Fatal(err)
	}
	full := study.FullScope
	tokens := []apiToken{
		{name: "anonymous"},
		{name: "participant", token: f.participant},
		{name: "viewer", token: f.tokens["viewer"], role: study.RoleViewer, scope: full},
		{name: "editor", token: f.tokens["editor"], role: study.RoleEditor, scope: full},
		{name: "owner", token: f.tokens["owner"], role: study.RoleOwner, scope: full},
		{name: "owner of another study", token: f.tokens["owner of another study"], scope: full},
		{name: "site administrator", token: f.tokens["site administrator"], role: study.RoleOwner, scope: full},
	}
	for _, sc := range []struct {
		name  string
		scope study.TokenScope
	}{
		{"read only", study.TokenScope{AllStudies: true, Read: true}},
		{"read, identifying", study.TokenScope{AllStudies: true, Read: true, Identifying: true}},
		{"write only", study.TokenScope{AllStudies: true, Write: true}},
		{"this study, read and write", study.TokenScope{Studies: []int64{f.studyA.ID}, Read: true, Write: true}},
		{"another study only", study.TokenScope{Studies: []int64{other.ID}, Read: true, Identifying: true, Write: true}},
	} {
		tok, _, err := f.accounts.CreateScopedAPIToken(ctx, owner.ID, sc.name, sc.scope)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, apiToken{name: "owner's token: " + sc.name, token: tok, role: study.RoleOwner, scope: sc.scope})
	}
	status := func() string {
		var s string
		if err := f.pool.QueryRow(ctx, `SELECT status FROM studies WHERE id = $1`, f.studyA.ID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	checked := 0
	for _, r := range routesOf(t, f.app) {
		need := wantNeeds[r.method+" "+r.pattern]
		if !strings.HasPrefix(r.pattern, "/api/") || need == "public" || need == "" {
			continue
		}
		path := f.path(t, r.pattern)
		for _, k := range tokens {
			want := k.expect(f.studyA.ID, need)
			body := ""
			if r.method == http.MethodPost {
				body = `{"status": "closed"}`
				if want == "ok" {
					body = `{"status": "open"}` // allowed: changes nothing either
				}
			}
			res := f.api(r.method, path, k.token, body, nil)
			checked++
			got := outcomeOf(http.MethodPost, res)
			if got != want {
				t.Errorf("%s %s with %s: %s (%d %s), want %s", r.method, r.pattern, k.name, got, res.StatusCode, res.body, want)
				continue
			}
			if got == "ok" && strings.HasSuffix(r.pattern, "/triplets.csv") {
				id := k.role >= study.RoleEditor && k.scope.Identifying
				if strings.Contains(res.body, "worker-1") != id || strings.Count(res.body, "\n") < 2 {
					t.Errorf("%s with %s: external id in the export %t, want %t", r.pattern, k.name, !id, id)
				}
			}
		}
	}
	if checked < 2*len(tokens) {
		t.Fatalf("only %d API requests checked", checked)
	}
	if st := status(); st != "open" {
		t.Fatalf("a refused token changed the study's status to %s", st)
	}
	// A session cookie is no API credential.
	if res := f.do(f.admin, "GET", "/api/v1/studies/"+f.studyA.Slug+"/triplets.csv", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API with a session cookie: %d, want 401", res.StatusCode)
	}
	// An allowed write works.
	res := f.api("POST", "/api/v1/studies/"+f.studyA.Slug+"/status", f.tokens["editor"], `{"status": "paused"}`, nil)
	if res.StatusCode != http.StatusOK || status() != "paused" {
		t.Fatalf("the editor's token pausing the study: %d %s, status %s", res.StatusCode, res.body, status())
	}
}

// The account page makes a token with the studies and rights ticked, and
// refuses a study the account may not see.
func TestTokenFormScopes(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	var owner principal
	for _, p := range f.principals {
		if p.name == "owner" {
			owner = p
		}
	}
	res := f.do(owner.client, "POST", "/admin/account/tokens", url.Values{"name": {"lab-b"}, "rights": {"1"}, "read": {"1"},
		"studies": {"lab-b-study"}}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "there is no study &#34;lab-b-study&#34; of yours") {
		t.Fatalf("a token for another lab's study: %d %s", res.StatusCode, res.body)
	}
	res = f.do(owner.client, "POST", "/admin/account/tokens", url.Values{"name": {"reader"}, "rights": {"1"}, "read": {"1"},
		"studies": {f.studyA.Slug}}, nil)
	m := regexp.MustCompile(`id="new-token">([^<]+)<`).FindStringSubmatch(res.body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("create a scoped token: %d %s", res.StatusCode, res.body)
	}
	if !strings.Contains(res.body, "<td>"+f.studyA.Slug+"</td><td>read</td>") {
		t.Error("the account page does not show the token's studies and rights")
	}
	if res := f.api("GET", "/api/v1/studies/"+f.studyA.Slug+"/triplets.csv", m[1], "", nil); res.StatusCode != http.StatusOK || strings.Contains(res.body, "worker-1") {
		t.Errorf("the read token's export: %d, identifying %t", res.StatusCode, strings.Contains(res.body, "worker-1"))
	}
	if res := f.api("POST", "/api/v1/studies/"+f.studyA.Slug+"/status", m[1], `{"status": "closed"}`, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("the read token writing: %d, want 403", res.StatusCode)
	}
	res = f.do(owner.client, "POST", "/admin/account/tokens", url.Values{"name": {"nothing"}, "rights": {"1"}}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "must at least read results or write") {
		t.Errorf("a token without rights: %d", res.StatusCode)
	}
}
