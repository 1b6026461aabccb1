package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/web"
)

const (
	mturkSandbox = "https://workersandbox.mturk.com"
	// Live workers see HITs on worker.mturk.com, requesters preview them
	// on www.mturk.com; assignments are submitted to www or the sandbox.
	mturkFrames = "frame-ancestors https://worker.mturk.com https://www.mturk.com https://workersandbox.mturk.com;"
	mturkPosts  = "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com"
)

var (
	participantTokenRE = regexp.MustCompile(`name="participant_token" value="([^"]+)"`)
	hiddenRE           = regexp.MustCompile(`<input type="hidden" name="([A-Za-z_]+)" value="([^"]*)"`)
)

// noCookies is a browser inside MTurk's iframe whose third-party cookies
// are blocked: it keeps no cookie and does not follow redirects.
func noCookies() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// mturkStudy makes study slug an MTurk study on the study form.
func mturkStudy(a *app, admin *http.Client, slug string, extra url.Values) { //nolint:unparam // the slug is named at the call
	a.t.Helper()
	form := url.Values{"title": {"HIT"}, "slug": {slug}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"platform": {"mturk"}}
	for k, v := range extra {
		form[k] = v
	}
	if res := a.do(admin, "POST", "/admin/studies/"+slug, form, nil); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("save the MTurk study: %d %s", res.StatusCode, res.body)
	}
}

// hitLink is the study's link as MTurk opens it for an assignment.
func hitLink(slug, worker, assignment, submitTo string) string {
	return "/s/" + slug + "?" + url.Values{"workerId": {worker}, "assignmentId": {assignment}, "hitId": {"HIT1"}, "turkSubmitTo": {submitTo}}.Encode()
}

// startHIT opens the HIT's link, checks the start form carries MTurk's
// parameters, starts, and returns the first question page's path.
func (a *app) startHIT(c *http.Client, slug, worker, assignment, submitTo string) string { //nolint:unparam // the slug is named at the call
	a.t.Helper()
	res := a.do(c, "GET", hitLink(slug, worker, assignment, submitTo), nil, nil)
	if res.StatusCode != http.StatusOK {
		a.t.Fatalf("landing: %d %s", res.StatusCode, res.body)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(res.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	want := url.Values{"external_id": {worker}, "assignmentId": {assignment}, "hitId": {"HIT1"}, "turkSubmitTo": {submitTo}}
	for k := range want {
		if form.Get(k) != want.Get(k) {
			a.t.Fatalf("the start form carries %s=%q, want %q:\n%s", k, form.Get(k), want.Get(k), res.body)
		}
	}
	res = a.do(c, "POST", "/s/"+slug+"/start", form, nil)
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	if len(res.Cookies()) != 0 {
		a.t.Errorf("an MTurk start sets cookies %v; its pages carry the token", res.Cookies())
	}
	return res.Header.Get("Location")
}

// finishHIT answers every question from path on, carrying the token the
// pages carry (no cookie), and returns the done page.
func (a *app) finishHIT(c *http.Client, slug, path string) response { //nolint:unparam // the slug is named at the call
	a.t.Helper()
	for range 100 {
		if !strings.Contains(path, "participant_token=") {
			a.t.Fatalf("the participant was sent to %q, without their token", path)
		}
		res := a.do(c, "GET", path, nil, nil)
		if res.Header.Get("Content-Security-Policy") == "" || !strings.Contains(res.Header.Get("Content-Security-Policy"), mturkFrames) {
			a.t.Fatalf("%s may not be framed by MTurk: %q", path, res.Header.Get("Content-Security-Policy"))
		}
		if res.StatusCode == http.StatusSeeOther {
			path = res.Header.Get("Location")
			if strings.HasPrefix(path, "/s/"+slug+"/done?") {
				return a.do(c, "GET", path, nil, nil)
			}
			continue
		}
		qid, closer, tok := questionIDRE.FindStringSubmatch(res.body), closerRE.FindStringSubmatch(res.body), participantTokenRE.FindStringSubmatch(res.body)
		if res.StatusCode != http.StatusOK || qid == nil || closer == nil || tok == nil {
			a.t.Fatalf("question page %s: %d\n%s", path, res.StatusCode, res.body)
		}
		ans := a.do(c, "POST", "/s/"+slug+"/answer", url.Values{"question_id": {qid[1]}, "closer": {closer[1]}, "participant_token": {tok[1]}}, nil)
		if ans.StatusCode != http.StatusSeeOther {
			a.t.Fatalf("answer: %d %s", ans.StatusCode, ans.body)
		}
		path = ans.Header.Get("Location")
	}
	a.t.Fatal("not done after 100 answers")
	return response{}
}

// An MTurk preview (assignmentId ASSIGNMENT_ID_NOT_AVAILABLE, or the link
// without MTurk's parameters) shows the instructions and an example
// question, may be framed by MTurk, and creates nothing.
func TestMTurkPreviewCreatesNothing(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("hit", 5, 3, "open")
	mturkStudy(a, a.admin(), "hit", nil)
	for _, link := range []string{
		"/s/hit?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1&turkSubmitTo=" + url.QueryEscape(mturkSandbox),
		"/s/hit",
	} {
		res := a.do(noCookies(), "GET", link, nil, nil)
		if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="preview-note"`) ||
			strings.Count(res.body, `src="/img/`) != 3 || strings.Contains(res.body, "<form") {
			t.Fatalf("%s: %d, want the preview with an example question and no form:\n%s", link, res.StatusCode, res.body)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, mturkFrames) || res.Header.Get("X-Frame-Options") != "" {
			t.Fatalf("%s: CSP %q, X-Frame-Options %q; want MTurk allowed to frame it", link, csp, res.Header.Get("X-Frame-Options"))
		}
	}
	// Starting from a preview is refused too.
	res := a.do(noCookies(), "POST", "/s/hit/start", url.Values{"external_id": {"W1"}, "assignmentId": {"ASSIGNMENT_ID_NOT_AVAILABLE"},
		"hitId": {"HIT1"}, "turkSubmitTo": {mturkSandbox}}, nil)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, "accept the HIT") {
		t.Fatalf("start from a preview: %d %s", res.StatusCode, res.body)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 0 {
		t.Fatalf("%d participants after previews", n)
	}
	if n := a.count(`SELECT count(*) FROM questions`); n != 0 {
		t.Fatalf("%d questions after previews", n)
	}
}

// The MTurk preview's example question follows the study's layout and
// language as its question page does: a German study laid out beside
// shows the example in one row (class layout-beside) with the German
// text naming the framed image on the left and German image
// descriptions, in a page with lang="de"; an English study laid out
// above shows the top image above. The three images have one size.
func TestMTurkPreviewFollowsLayoutAndLanguage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		layout, language string
		want             []string
	}{
		{"beside", "de", []string{`<html lang="de"`, `class="example layout-beside"`,
			"Welches ist dem gerahmten Bild links ähnlicher? Sie antworten, indem Sie auf eines der beiden Bilder rechts davon klicken",
			`alt="gerahmtes Bild links: `, "Eine Beispielfrage"}},
		{"above", "en", []string{`<html lang="en"`, `class="example layout-above"`,
			"Which is more similar to the top image?", `alt="top image: `}},
	} {
		t.Run(c.layout+"-"+c.language, func(t *testing.T) {
			t.Parallel()
			a := newApp(t)
			a.study("hit", 5, 3, "open")
			mturkStudy(a, a.admin(), "hit", url.Values{"layout": {c.layout}, "language": {c.language}})
			res := a.do(noCookies(), "GET", "/s/hit", nil, nil)
			if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="preview-note"`) {
				t.Fatalf("preview: %d %s", res.StatusCode, res.body)
			}
			for _, w := range c.want {
				if !strings.Contains(res.body, w) {
					t.Errorf("the preview lacks %q:\n%s", w, res.body)
				}
			}
			if n := strings.Count(res.body, `width="240" height="240"`); n != 3 {
				t.Errorf("%d of the example's images at 240×240, want all 3 at one size", n)
			}
		})
	}
}

// The MTurk preview's example question is of the study's format: an
// odd-one-out study's shows three items side by side under the
// odd-one-out question; a rank 4-choose-2 study's shows the framed query
// and its four references under the rank question (issue 27).
func TestMTurkPreviewFollowsFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		form   url.Values
		images int
		want   []string
	}{
		{url.Values{"format": {"odd-one-out"}}, 3, []string{"Which one does not belong?", `class="trial trial-odd"`}},
		{url.Values{"format": {"rank"}, "rank_n": {"4"}, "rank_k": {"2"}}, 5, []string{
			"Choose the 2 images most like the framed one, in order", `class="trial trial-rank"`, `class="references example-options"`}},
	} {
		t.Run(c.form.Get("format"), func(t *testing.T) {
			t.Parallel()
			a := newApp(t)
			a.study("hit", 6, 3, "open")
			mturkStudy(a, a.admin(), "hit", c.form)
			res := a.do(noCookies(), "GET", "/s/hit", nil, nil)
			if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `id="preview-note"`) || strings.Contains(res.body, "<form") {
				t.Fatalf("preview: %d %s", res.StatusCode, res.body)
			}
			for _, w := range c.want {
				if !strings.Contains(res.body, w) {
					t.Errorf("the preview lacks %q:\n%s", w, res.body)
				}
			}
			if n := strings.Count(res.body, `src="/img/`); n != c.images {
				t.Errorf("the example shows %d images, want %d", n, c.images)
			}
		})
	}
}

// A worker takes the HIT with no cookie (as in MTurk's iframe with
// third-party cookies blocked): workerId is their participant id, the
// assignment's parameters are kept with them, the pages carry their token,
// and the last page posts the assignment with the code to turkSubmitTo. The
// same worker opening the assignment again continues the same participant;
// an excluded worker's HIT is submitted with the screened-out code. The token
// in the URL means nothing to a study that is not on MTurk.
func TestMTurkWorkerTakesPart(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("hit", 5, 3, "open")
	admin := a.admin()
	mturkStudy(a, admin, "hit", url.Values{"screened_out_code": {"SCR33N"}})
	if res := a.do(admin, "GET", "/admin/studies/hit/edit", nil, nil); !strings.Contains(res.body, `<option value="mturk" selected>`) ||
		!strings.Contains(res.body, `value="SCR33N"`) {
		t.Fatalf("the edit form does not show the MTurk platform:\n%s", res.body)
	}
	if res := a.do(admin, "GET", "/admin/studies/hit", nil, nil); !strings.Contains(res.body, "recruits on MTurk") {
		t.Errorf("the study page does not say it recruits on MTurk")
	}

	c := noCookies()
	first := a.startHIT(c, "hit", "W1", "A1", mturkSandbox)
	done := a.finishHIT(c, "hit", first)
	code := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`).FindStringSubmatch(done.body)
	if code == nil {
		t.Fatalf("done page:\n%s", done.body)
	}
	for _, want := range []string{`action="` + mturkSandbox + `/mturk/externalSubmit"`, `name="assignmentId" value="A1"`, `name="code" value="` + code[1] + `"`} {
		if !strings.Contains(done.body, want) {
			t.Fatalf("the done page lacks %s:\n%s", want, done.body)
		}
	}
	if csp := done.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, mturkPosts) {
		t.Fatalf("the done page's form may not post to MTurk: %q", csp)
	}
	var ext, params string
	if err := a.pool.QueryRow(t.Context(), `SELECT external_id, platform_params::text FROM participants WHERE study_id = $1`, st.ID).Scan(&ext, &params); err != nil {
		t.Fatal(err)
	}
	if ext != "W1" || params != `{"hitId": "HIT1", "assignmentId": "A1", "turkSubmitTo": "https://workersandbox.mturk.com"}` {
		t.Fatalf("kept external id %q and parameters %s", ext, params)
	}

	// The same worker opening the same assignment again (another browser,
	// no token): the same participant, done, with the same code, submitted
	// to that assignment. (Another assignment: TestMTurkCompletedWorkerOnAnotherHIT.)
	again := a.startHIT(noCookies(), "hit", "W1", "A1", mturkSandbox)
	done = a.finishHIT(noCookies(), "hit", again)
	if !strings.Contains(done.body, `id="completion-code">`+code[1]+`<`) || !strings.Contains(done.body, `name="assignmentId" value="A1"`) ||
		!strings.Contains(done.body, `action="`+mturkSandbox+`/mturk/externalSubmit"`) {
		t.Fatalf("the returning worker's done page:\n%s", done.body)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d participants for one worker", n)
	}

	// Without the token the question page cannot tell who it is for.
	if res := a.do(noCookies(), "GET", "/s/hit/q", nil, nil); res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.body, "open the HIT again") {
		t.Fatalf("a question page without a token: %d %s", res.StatusCode, res.body)
	}

	// An excluded worker's HIT goes back with the screened-out code.
	c2 := noCookies()
	q := a.startHIT(c2, "hit", "W2", "A3", mturkSandbox)
	a.do(c2, "GET", q, nil, nil)
	var pub string
	if err := a.pool.QueryRow(t.Context(), `SELECT public_id FROM participants WHERE external_id = 'W2'`).Scan(&pub); err != nil {
		t.Fatal(err)
	}
	if res := a.do(admin, "POST", "/admin/studies/hit/participants/"+pub+"/exclude", url.Values{"excluded": {"1"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("exclude: %d %s", res.StatusCode, res.body)
	}
	done = a.finishHIT(c2, "hit", q)
	if !strings.Contains(done.body, `name="code" value="SCR33N"`) || !strings.Contains(done.body, `name="assignmentId" value="A3"`) {
		t.Fatalf("the excluded worker's done page:\n%s", done.body)
	}

	// A study not on MTurk ignores a token in the URL: its participants
	// are known by their (SameSite) cookie only.
	plain := a.study("plain", 5, 2, "open")
	_, tok, err := a.store.CreateParticipant(t.Context(), plain.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := a.do(noCookies(), "GET", "/s/plain/q?participant_token="+url.QueryEscape(tok), nil, nil); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/s/plain" {
		t.Fatalf("a token in a plain study's URL: %d %q; want back to the start page", res.StatusCode, res.Header.Get("Location"))
	}
}

// MTurk's parameters are checked before anything is stored: turkSubmitTo
// must be MTurk's live or sandbox site exactly (a local stand-in only when
// the server's Config names it, never by a link), and the ids must look
// like MTurk's.
func TestMTurkLinkChecked(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("hit", 5, 3, "open")
	mturkStudy(a, a.admin(), "hit", nil)
	for name, c := range map[string]struct{ worker, assignment, submitTo, want string }{
		"another site":         {"W1", "A1", "https://evil.example", "turkSubmitTo must be"},
		"a look-alike":         {"W1", "A1", "https://www.mturk.com.evil.example", "turkSubmitTo must be"},
		"plain http":           {"W1", "A1", "http://www.mturk.com", "turkSubmitTo must be"},
		"a path":               {"W1", "A1", "https://www.mturk.com/elsewhere", "turkSubmitTo must be"},
		"a user":               {"W1", "A1", "https://x@www.mturk.com", "turkSubmitTo must be"},
		"a query":              {"W1", "A1", "https://www.mturk.com?x=1", "turkSubmitTo must be"},
		"none":                 {"W1", "A1", "", "turkSubmitTo must be"},
		"the worker site":      {"W1", "A1", "https://worker.mturk.com", "turkSubmitTo must be"},
		"a local stand-in":     {"W1", "A1", "http://127.0.0.1:9", "turkSubmitTo must be"},
		"no worker":            {"", "A1", mturkSandbox, "workerId is missing"},
		"a worker with spaces": {"W 1", "A1", mturkSandbox, "workerId is missing"},
		"a long assignment":    {"W1", strings.Repeat("A", 65), mturkSandbox, "assignmentId is missing"},
	} {
		res := a.do(noCookies(), "GET", hitLink("hit", c.worker, c.assignment, c.submitTo), nil, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, c.want) {
			t.Errorf("%s: landing %d, want 400 with %q:\n%s", name, res.StatusCode, c.want, res.body)
		}
		res = a.do(noCookies(), "POST", "/s/hit/start", url.Values{"external_id": {c.worker}, "assignmentId": {c.assignment},
			"hitId": {"HIT1"}, "turkSubmitTo": {c.submitTo}}, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, c.want) {
			t.Errorf("%s: start %d, want 400 with %q", name, res.StatusCode, c.want)
		}
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 0 {
		t.Fatalf("%d participants after refused links", n)
	}
	// A trailing slash is the same site.
	if res := a.do(noCookies(), "GET", hitLink("hit", "W1", "A1", "https://www.mturk.com/"), nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("https://www.mturk.com/: %d %s", res.StatusCode, res.body)
	}

	// A server configured with a stand-in (tests only) takes it, and lets it frame the study.
	b := newAppWith(t, web.Config{MTurkTestOrigins: []string{"http://127.0.0.1:9/"}})
	b.study("hit", 5, 3, "open")
	mturkStudy(b, b.admin(), "hit", nil)
	res := b.do(noCookies(), "GET", hitLink("hit", "W1", "A1", "http://127.0.0.1:9"), nil, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Security-Policy"),
		"frame-ancestors https://worker.mturk.com https://www.mturk.com https://workersandbox.mturk.com http://127.0.0.1:9;") {
		t.Fatalf("the configured stand-in: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
}

// Only an MTurk study's pages may be framed, and only by MTurk: the admin
// pages and other studies' pages keep frame-ancestors 'none' and
// X-Frame-Options DENY.
func TestMTurkFramingHeaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("hit", 5, 3, "open")
	a.study("plain", 5, 3, "open")
	admin := a.admin()
	mturkStudy(a, admin, "hit", nil)
	c := noCookies()
	q := a.startHIT(c, "hit", "W1", "A1", mturkSandbox)
	framed := map[string]response{
		"landing":  a.do(c, "GET", hitLink("hit", "W1", "A1", mturkSandbox), nil, nil),
		"preview":  a.do(c, "GET", "/s/hit", nil, nil),
		"question": a.do(c, "GET", q, nil, nil),
		"declined": a.do(c, "GET", "/s/hit/declined", nil, nil),
		"refused":  a.do(c, "GET", hitLink("hit", "W1", "A1", "https://evil.example"), nil, nil),
	}
	for name, res := range framed {
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, mturkFrames) || !strings.HasSuffix(csp, mturkPosts) || strings.Contains(csp, "'none'; form") || res.Header.Get("X-Frame-Options") != "" {
			t.Errorf("MTurk study %s (%d): CSP %q, X-Frame-Options %q; want MTurk allowed to frame it", name, res.StatusCode, csp, res.Header.Get("X-Frame-Options"))
		}
	}
	plainClient := a.client()
	kept := map[string]response{
		"admin studies":  a.do(admin, "GET", "/admin", nil, nil),
		"admin study":    a.do(admin, "GET", "/admin/studies/hit", nil, nil),
		"admin login":    a.do(a.client(), "GET", "/admin/login", nil, nil),
		"plain landing":  a.do(plainClient, "GET", "/s/plain?workerId=W1&assignmentId=A1&turkSubmitTo="+url.QueryEscape(mturkSandbox), nil, nil),
		"plain start":    a.do(plainClient, "POST", "/s/plain/start", url.Values{}, nil),
		"plain question": a.do(plainClient, "GET", "/s/plain/q", nil, nil),
		"unknown study":  a.do(c, "GET", "/s/nope", nil, nil),
		"health check":   a.do(c, "GET", "/healthz", nil, nil),
	}
	for name, res := range kept {
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none';") || strings.Contains(csp, "mturk") || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s (%d): CSP %q, X-Frame-Options %q; want framing refused", name, res.StatusCode, csp, res.Header.Get("X-Frame-Options"))
		}
	}
}

// An MTurk worker who does not agree to the consent text: the page, in
// MTurk's frame, tells them to return the HIT with MTurk's Return button
// (MTurk has no address to send them back to, so it links nowhere), and
// nothing is stored.
func TestMTurkConsentDeclined(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("hit", 5, 3, "open")
	mturkStudy(a, a.admin(), "hit", url.Values{"consent": {"I know my answers are kept."}})
	c := noCookies()
	landing := a.do(c, "GET", hitLink("hit", "W1", "A1", mturkSandbox), nil, nil)
	if !strings.Contains(landing.body, "I know my answers are kept.") || !strings.Contains(landing.body, `href="/s/hit/declined"`) {
		t.Fatalf("the HIT's first page lacks the consent and the way to decline:\n%s", landing.body)
	}
	res := a.do(c, "GET", "/s/hit/declined", nil, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, "Nothing about you was stored") ||
		!strings.Contains(res.body, "return the HIT: use the Return button on MTurk&#39;s page") {
		t.Fatalf("declined page: %d\n%s", res.StatusCode, res.body)
	}
	if strings.Contains(res.body, `class="button" href=`) {
		t.Errorf("the declined page of an MTurk study links somewhere:\n%s", res.body)
	}
	if !strings.Contains(res.Header.Get("Content-Security-Policy"), mturkFrames) {
		t.Errorf("the declined page may not show in MTurk's frame: %q", res.Header.Get("Content-Security-Policy"))
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 0 {
		t.Errorf("%d participants stored after declining, want 0", n)
	}
}

// An MTurk worker who completed the study and accepts another of its HITs
// (a new assignmentId) is asked to return it: the landing page and the
// start form answer 409 with a page that posts nothing to MTurk, and their
// participant keeps the assignment they completed (no token added), so the
// code is never submitted with a second assignment. Their first HIT's done
// page still submits the first assignment. A worker who did not complete
// and comes back on a new assignment (they returned the first HIT)
// continues where they left off, and their last page submits the new one.
func TestMTurkCompletedWorkerOnAnotherHIT(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("hit", 5, 3, "open")
	mturkStudy(a, a.admin(), "hit", nil)

	c := noCookies()
	first := a.startHIT(c, "hit", "W1", "A1", mturkSandbox)
	done := a.finishHIT(c, "hit", first)
	code := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`).FindStringSubmatch(done.body)
	if code == nil || !strings.Contains(done.body, `name="assignmentId" value="A1"`) {
		t.Fatalf("done page:\n%s", done.body)
	}
	doneURL := strings.TrimPrefix(done.Request.URL.String(), a.srv.URL)
	keptA1 := `{"hitId": "HIT1", "assignmentId": "A1", "turkSubmitTo": "https://workersandbox.mturk.com"}`
	tokens := a.count(`SELECT count(*) FROM participant_tokens`)

	// Another HIT of the study: its preview shows as usual; accepted, it is refused.
	if res := a.do(noCookies(), "GET", "/s/hit?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT2", nil, nil); res.StatusCode != http.StatusOK ||
		!strings.Contains(res.body, `id="preview-note"`) {
		t.Fatalf("the other HIT's preview: %d\n%s", res.StatusCode, res.body)
	}
	refused := func(name string, res response) {
		t.Helper()
		if res.StatusCode != http.StatusConflict || !strings.Contains(res.body, "You already completed this study") ||
			!strings.Contains(res.body, "Please return this HIT") {
			t.Fatalf("%s: %d, want 409 asking to return the HIT:\n%s", name, res.StatusCode, res.body)
		}
		if strings.Contains(res.body, "<form") || strings.Contains(res.body, "externalSubmit") || strings.Contains(res.body, code[1]) ||
			res.Header.Get("Location") != "" {
			t.Fatalf("%s submits, shows the code or sends the worker on (%q):\n%s", name, res.Header.Get("Location"), res.body)
		}
		if !strings.Contains(res.Header.Get("Content-Security-Policy"), mturkFrames) {
			t.Fatalf("%s may not show in MTurk's frame: %q", name, res.Header.Get("Content-Security-Policy"))
		}
	}
	refused("landing", a.do(noCookies(), "GET", hitLink("hit", "W1", "A2", "https://www.mturk.com"), nil, nil))
	refused("start", a.do(noCookies(), "POST", "/s/hit/start", url.Values{"external_id": {"W1"}, "assignmentId": {"A2"},
		"hitId": {"HIT1"}, "turkSubmitTo": {"https://www.mturk.com"}}, nil))
	var params string
	if err := a.pool.QueryRow(t.Context(), `SELECT platform_params::text FROM participants WHERE external_id = 'W1'`).Scan(&params); err != nil {
		t.Fatal(err)
	}
	if params != keptA1 {
		t.Fatalf("the completed worker's parameters became %s, want %s", params, keptA1)
	}
	if n := a.count(`SELECT count(*) FROM participant_tokens`); n != tokens {
		t.Fatalf("%d participant tokens after the refusals, want %d", n, tokens)
	}
	if res := a.do(noCookies(), "GET", doneURL, nil, nil); !strings.Contains(res.body, `name="assignmentId" value="A1"`) ||
		!strings.Contains(res.body, `action="`+mturkSandbox+`/mturk/externalSubmit"`) {
		t.Fatalf("the first HIT's done page:\n%s", res.body)
	}

	// A worker who returned their first HIT half way continues on a new one.
	c2 := noCookies()
	q := a.startHIT(c2, "hit", "W2", "A3", mturkSandbox)
	res := a.do(c2, "GET", q, nil, nil)
	qid, closer, tok := questionIDRE.FindStringSubmatch(res.body), closerRE.FindStringSubmatch(res.body), participantTokenRE.FindStringSubmatch(res.body)
	if qid == nil || closer == nil || tok == nil {
		t.Fatalf("question page: %d\n%s", res.StatusCode, res.body)
	}
	if ans := a.do(c2, "POST", "/s/hit/answer", url.Values{"question_id": {qid[1]}, "closer": {closer[1]}, "participant_token": {tok[1]}}, nil); ans.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", ans.StatusCode, ans.body)
	}
	again := a.startHIT(noCookies(), "hit", "W2", "A4", "https://www.mturk.com")
	if res := a.do(noCookies(), "GET", again, nil, nil); !strings.Contains(res.body, "1 of 3</span>") {
		t.Fatalf("the returning worker does not continue where they left off:\n%s", res.body)
	}
	done = a.finishHIT(noCookies(), "hit", again)
	if !strings.Contains(done.body, `name="assignmentId" value="A4"`) || !strings.Contains(done.body, `action="https://www.mturk.com/mturk/externalSubmit"`) {
		t.Fatalf("the returning worker's done page:\n%s", done.body)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE study_id = $1`, st.ID); n != 2 {
		t.Fatalf("%d participants for two workers", n)
	}
}
