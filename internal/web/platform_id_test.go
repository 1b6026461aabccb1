package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// platformStudy sets study slug's recruiting platform on the study form
// (extra: the platform's settings and any other field).
func platformStudy(a *app, admin *http.Client, slug, platform string, extra url.Values) {
	a.t.Helper()
	form := url.Values{"title": {"Study " + slug}, "slug": {slug}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"platform": {platform}}
	for k, v := range extra {
		form[k] = v
	}
	if res := a.do(admin, "POST", "/admin/studies/"+slug, form, nil); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("save study %s on %s: %d %s", slug, platform, res.StatusCode, res.body)
	}
}

// A study on Prolific, MTurk or a generic platform is joined with the
// platform's id only: the landing page, the start form and the API refuse
// a newcomer without one (missing, or white space) with a page (JSON for
// the API) that says where the study must be opened from and which link
// parameter carries the id, and store nothing. So a participant of an
// earlier study the study refuses cannot get in by leaving the id out. A
// browser that holds a participant of the study still continues without
// the id in the link, an MTurk preview still shows, and a study without a
// platform still takes anonymous participants.
func TestPlatformStudyNeedsTheID(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	a.study("first", 5, 3, "open")
	pro := a.study("pro", 5, 3, "open")
	platformStudy(a, admin, "pro", "prolific", url.Values{"completion_code": {"C0DE"}, "exclude_studies": {"first"}})
	gen := a.study("gen", 5, 3, "open")
	platformStudy(a, admin, "gen", "generic", url.Values{"id_param": {"pid"}})
	hit := a.study("hit", 5, 3, "open")
	platformStudy(a, admin, "hit", "mturk", nil)
	a.study("plain", 5, 3, "open")

	// Someone who took part in the first study, which the Prolific study refuses.
	if res := a.do(a.client(), "POST", "/s/first/start", url.Values{"external_id": {"vet"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("joining the first study: %d", res.StatusCode)
	}

	for _, c := range []struct {
		slug, link, start string // a link without the id, the start form's external_id
		want              []string
	}{
		{"pro", "/s/pro", "", []string{"Please open this study from Prolific", "takes its participants from Prolific",
			"PROLIFIC_PID", "/s/pro?PROLIFIC_PID=test", "Nothing about you was stored"}},
		{"pro", "/s/pro?PROLIFIC_PID=%20%20&STUDY_ID=s1&SESSION_ID=x1", "  ", []string{"Please open this study from Prolific"}},
		{"pro", "/s/pro?participant=vet&workerId=vet", "\t", []string{"Please open this study from Prolific"}},
		{"gen", "/s/gen", "", []string{"takes its participants from a recruiting platform", "the link the platform gave you",
			"link&#39;s pid parameter", "/s/gen?pid=test"}},
		{"gen", "/s/gen?PROLIFIC_PID=p1&participant=p1", " ", []string{"/s/gen?pid=test"}},
	} {
		res := a.do(a.client(), "GET", c.link, nil, nil)
		if res.StatusCode != http.StatusBadRequest || strings.Contains(res.body, "/start") {
			t.Errorf("%s: %d, want 400 and no start form:\n%s", c.link, res.StatusCode, res.body)
		}
		for _, want := range c.want {
			if !strings.Contains(res.body, want) {
				t.Errorf("%s lacks %q:\n%s", c.link, want, res.body)
			}
		}
		res = a.do(a.client(), "POST", "/s/"+c.slug+"/start", url.Values{"external_id": {c.start}}, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, c.want[0]) || len(res.Cookies()) != 0 {
			t.Errorf("start %s with external_id %q: %d, cookies %v; want 400 with %q:\n%s", c.slug, c.start, res.StatusCode, res.Cookies(), c.want[0], res.body)
		}
	}
	// The API: external_id missing, empty or white space.
	for _, c := range []struct{ slug, want string }{
		{"pro", "from Prolific: join with the participant's Prolific id (PROLIFIC_PID) as external_id"},
		{"gen", "(the link's pid parameter) as external_id"},
		{"hit", "from MTurk: join with the worker's workerId as external_id"},
	} {
		for _, body := range []string{"", `{}`, `{"external_id": ""}`, `{"external_id": "  "}`} {
			res := a.api("POST", "/api/v1/studies/"+c.slug+"/participants", "", body, nil)
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, `"error":`) || !strings.Contains(res.body, c.want) {
				t.Errorf("API join of %s with %q: %d %s; want 400 with %q", c.slug, body, res.StatusCode, res.body, c.want)
			}
		}
	}
	// MTurk: the preview needs no workerId; an accepted HIT's link does.
	if res := a.do(noCookies(), "GET", "/s/hit?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1", nil, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, `id="preview-note"`) {
		t.Errorf("the MTurk preview: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(noCookies(), "GET", hitLink("hit", "", "A1", mturkSandbox), nil, nil); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(res.body, "workerId is missing") {
		t.Errorf("an MTurk link without workerId: %d\n%s", res.StatusCode, res.body)
	}
	for _, st := range []struct {
		slug string
		id   int64
	}{{"pro", pro.ID}, {"gen", gen.ID}, {"hit", hit.ID}} {
		if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.id); n != 0 {
			t.Errorf("%d participants of %s stored without an id", n, st.slug)
		}
	}

	// With the id: the refused veteran stays refused, a newcomer joins.
	if res := a.do(a.client(), "GET", "/s/pro?PROLIFIC_PID=vet", nil, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("the veteran with their id: %d", res.StatusCode)
	}
	c := a.client()
	if res := a.do(c, "GET", "/s/pro?PROLIFIC_PID=%20p1%20", nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, `name="external_id" value="p1"`) {
		t.Fatalf("a Prolific participant's landing: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(c, "POST", "/s/pro/start", url.Values{"external_id": {"p1"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a Prolific participant's start: %d %s", res.StatusCode, res.body)
	}
	// Their browser continues them without the id in the link (the
	// question page sends a browser without a participant to /s/pro).
	if res := a.do(c, "GET", "/s/pro", nil, nil); res.StatusCode != http.StatusOK || !regexp.MustCompile(`>\s*Continue\s*<`).MatchString(res.body) {
		t.Errorf("the participant's browser on /s/pro: %d\n%s", res.StatusCode, res.body)
	}
	if res := a.do(c, "POST", "/s/pro/start", url.Values{"external_id": {""}}, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/pro/q" {
		t.Errorf("the participant's browser starting again: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, pro.ID); n != 1 {
		t.Errorf("%d participants of the Prolific study, want 1", n)
	}
	if res := a.do(a.client(), "GET", "/s/gen?pid=g1", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("a generic platform's participant: %d", res.StatusCode)
	}
	if res := a.api("POST", "/api/v1/studies/pro/participants", "", `{"external_id": "p2"}`, nil); res.StatusCode != http.StatusCreated {
		t.Errorf("API join with an id: %d %s", res.StatusCode, res.body)
	}

	// A study without a platform takes anonymous participants.
	if res := a.do(a.client(), "GET", "/s/plain", nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, `action="/s/plain/start"`) {
		t.Errorf("a plain study's landing: %d", res.StatusCode)
	}
	if res := a.do(a.client(), "POST", "/s/plain/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a plain study's anonymous start: %d", res.StatusCode)
	}
	a.join("plain", "")
}
