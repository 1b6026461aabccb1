package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// pageTarget is one action a page offers: a form's method and action, or
// a link (GET).
type pageTarget struct{ method, path string }

var (
	formRE   = regexp.MustCompile(`(?is)<form\b([^>]*)>`)
	linkRE   = regexp.MustCompile(`(?is)<a\b([^>]*)>`)
	attrRE   = regexp.MustCompile(`(?is)\b(method|action|href|formaction)\s*=\s*"([^"]*)"`)
	buttonRE = regexp.MustCompile(`(?is)<button\b([^>]*)>`)
)

// pageTargets lists every form action, button formaction and link of a
// page, as the method and path a click sends (query and fragment cut; the
// server's own origin cut from absolute links; links to anchors and to
// other sites left out).
func pageTargets(t *testing.T, body, origin string) []pageTarget {
	t.Helper()
	attrs := func(tag string) map[string]string {
		m := map[string]string{}
		for _, a := range attrRE.FindAllStringSubmatch(tag, -1) {
			m[strings.ToLower(a[1])] = html.UnescapeString(a[2])
		}
		return m
	}
	clean := func(u string) (string, bool) {
		u = strings.TrimPrefix(u, origin)
		if u == "" || strings.HasPrefix(u, "#") || !strings.HasPrefix(u, "/") {
			return "", false
		}
		p, err := url.Parse(u)
		if err != nil {
			t.Fatalf("a target %q: %v", u, err)
		}
		return p.Path, true
	}
	var out []pageTarget
	for _, f := range formRE.FindAllStringSubmatch(body, -1) {
		a := attrs(f[1])
		method := strings.ToUpper(a["method"])
		if method == "" {
			method = http.MethodGet
		}
		if p, ok := clean(a["action"]); ok {
			out = append(out, pageTarget{method, p})
		} else if a["action"] != "" {
			t.Errorf("a form posts to %q", a["action"])
		}
	}
	for _, b := range buttonRE.FindAllStringSubmatch(body, -1) {
		if p, ok := clean(attrs(b[1])["formaction"]); ok {
			out = append(out, pageTarget{http.MethodPost, p})
		}
	}
	for _, l := range linkRE.FindAllStringSubmatch(body, -1) {
		if p, ok := clean(attrs(l[1])["href"]); ok {
			out = append(out, pageTarget{http.MethodGet, p})
		}
	}
	return out
}

// routeOf is the route of wantNeeds a request goes to: the pattern that
// matches its path with the most literal characters (chi prefers a static
// segment, /admin/studies/new, to a parameter).
func routeOf(method, path string) (string, bool) {
	best, bestLen := "", -1
	for key := range wantNeeds {
		m, pattern, _ := strings.Cut(key, " ")
		if m != method && m != "*" {
			continue
		}
		re := "^" + regexp.QuoteMeta(pattern) + "$"
		re = regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(re, `[^/]+`)
		re = strings.ReplaceAll(re, `\*`, `.*`)
		if !regexp.MustCompile(re).MatchString(path) {
			continue
		}
		if n := len(urlParamRE.ReplaceAllString(pattern, "")); n > bestLen {
			best, bestLen = key, n
		}
	}
	return best, bestLen >= 0
}

// mayUse reports whether p's request to route succeeds by the role table.
func mayUse(p principal, route string) bool {
	need := wantNeeds[route]
	return need == "public" || p.expect(need) == "ok"
}

// Every page with actions shows each role only what it may do: every form
// action and link on the study page, the dashboard, the people, history
// and erase pages, the account page and the studies list is a route the
// role table (wantNeeds, which TestEveryRouteAgainstEveryRole holds to the
// router's 403s) lets the viewer use, so no button answers its click with
// 403; and the actions the role may use are there.
func TestPagesOfferOnlyWhatTheRoleAllows(t *testing.T) {
	t.Parallel()
	f := newLabsFixture(t)
	slug := f.studyA.Slug
	study := "/admin/studies/" + slug
	pages := []struct {
		path string
		// present are the routes the page offers to every role that may
		// use them.
		present []string
	}{
		{study, []string{
			"GET /admin/studies/{slug}/dashboard", "GET /admin/studies/{slug}/edit", "GET /admin/studies/{slug}/people",
			"GET /admin/studies/{slug}/history", "GET /admin/studies/{slug}/participants/erase", "GET /admin/studies/{slug}/triplets.csv",
			"GET /admin/studies/{slug}/qr.png", "POST /admin/studies/{slug}/status", "POST /admin/studies/{slug}/preview",
			"POST /admin/studies/{slug}/items", "POST /admin/studies/{slug}/gold", "POST /admin/studies/{slug}/estimate",
			"POST /admin/studies/{slug}/delete",
		}},
		{study + "/dashboard", []string{
			"GET /admin/studies/{slug}", "POST /admin/studies/{slug}/participants/{participant}/exclude",
			"GET /admin/studies/{slug}/triplets.csv", "GET /admin/studies/{slug}/embedding.csv", "GET /admin/studies/{slug}/participants.csv",
			"GET /admin/studies/{slug}/bundle.zip", "POST /admin/studies/{slug}/dashboard/settings",
		}},
		{study + "/people", []string{"GET /admin/studies/{slug}", "POST /admin/studies/{slug}/people", "POST /admin/studies/{slug}/people/{account}/remove"}},
		{study + "/history", []string{"GET /admin/studies/{slug}"}},
		{study + "/participants/erase", []string{"POST /admin/studies/{slug}/participants/erase", "POST /admin/studies/{slug}/retention"}},
		{"/admin/account", []string{"POST /admin/account/tokens", "POST /admin/account/admins", "GET /admin/audit.csv", "POST /admin/logout"}},
		{"/admin", []string{"GET /admin/studies/new", "GET /admin/import", "GET /admin/studies/{slug}"}},
	}
	checked := 0
	for _, p := range f.principals {
		if !p.account || p.name == "owner of another study" {
			continue
		}
		for _, pg := range pages {
			pageRoute, ok := routeOf(http.MethodGet, pg.path)
			if !ok {
				t.Fatalf("%s matches no route", pg.path)
			}
			res := f.do(p.client, "GET", pg.path, nil, p.header)
			if !mayUse(p, pageRoute) {
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s: %s gives %d, want 403", p.name, pg.path, res.StatusCode)
				}
				continue
			}
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s gives %d", p.name, pg.path, res.StatusCode)
			}
			offered := map[string]bool{}
			for _, tg := range pageTargets(t, res.body, f.srv.URL) {
				route, ok := routeOf(tg.method, tg.path)
				if !ok {
					t.Errorf("%s on %s: %s %s goes to no route", p.name, pg.path, tg.method, tg.path)
					continue
				}
				offered[route] = true
				checked++
				if !mayUse(p, route) {
					t.Errorf("%s on %s is offered %s %s (%s), which it may not use: %s", p.name, pg.path, tg.method, tg.path, route, p.expect(wantNeeds[route]))
				}
			}
			for _, route := range pg.present {
				if mayUse(p, route) && !offered[route] {
					t.Errorf("%s on %s is not offered %s, which it may use", p.name, pg.path, route)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d actions checked: the pages or the parser changed", checked)
	}
}
