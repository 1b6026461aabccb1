package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// finishByForm answers every question of the browser's participant by
// form POST and returns the done page.
func (a *app) finishByForm(c *http.Client, slug string) response {
	a.t.Helper()
	for range 100 {
		res := a.do(c, "GET", "/s/"+slug+"/q", nil, nil)
		if res.StatusCode == http.StatusSeeOther {
			if res.Header.Get("Location") != "/s/"+slug+"/done" {
				a.t.Fatalf("question page sent to %q", res.Header.Get("Location"))
			}
			return a.do(c, "GET", "/s/"+slug+"/done", nil, nil)
		}
		qid, closer := questionIDRE.FindStringSubmatch(res.body), closerRE.FindStringSubmatch(res.body)
		if res.StatusCode != http.StatusOK || qid == nil || closer == nil {
			a.t.Fatalf("question page: %d\n%s", res.StatusCode, res.body)
		}
		if r := a.do(c, "POST", "/s/"+slug+"/answer", url.Values{"question_id": {qid[1]}, "closer": {closer[1]}}, nil); r.StatusCode != http.StatusSeeOther {
			a.t.Fatalf("answer: %d %s", r.StatusCode, r.body)
		}
	}
	a.t.Fatal("not done after 100 answers")
	return response{}
}

// A Prolific study set up on the study form: a participant from Prolific's
// link (PROLIFIC_PID, STUDY_ID, SESSION_ID) answers, sees the study's
// completion code and is sent back to Prolific with it; the researcher sees
// the kept STUDY_ID and SESSION_ID. A participant the researcher excluded
// gets the screened-out code.
func TestProlificStudy(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("pro", 5, 3, "open")
	admin := a.admin()
	form := url.Values{"title": {"Pro"}, "slug": {"pro"}, "questions_per_participant": {"3"}, "status": {"open"}, "design": {"random"},
		"platform": {"prolific"}, "completion_code": {"C1A2B3"}, "screened_out_code": {"SCR33N"}}
	bad := withField(form, "completion_code", "")
	if res := a.do(admin, "POST", "/admin/studies/pro", bad, nil); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.body, "needs its completion code") {
		t.Fatalf("Prolific study without a code: %d", res.StatusCode)
	}
	if res := a.do(admin, "POST", "/admin/studies/pro", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(admin, "GET", "/admin/studies/pro/edit", nil, nil); !strings.Contains(res.body, `<option value="prolific" selected>`) ||
		!strings.Contains(res.body, `value="C1A2B3"`) || !strings.Contains(res.body, `value="SCR33N"`) {
		t.Fatalf("edit form does not show the platform:\n%s", res.body)
	}

	c := a.client()
	res := a.do(c, "GET", "/s/pro?PROLIFIC_PID=5f1e&STUDY_ID=st77&SESSION_ID=se88&workerId=not-this", nil, nil)
	for _, want := range []string{`name="external_id" value="5f1e"`, `name="STUDY_ID" value="st77"`, `name="SESSION_ID" value="se88"`} {
		if !strings.Contains(res.body, want) {
			t.Fatalf("landing lacks %s:\n%s", want, res.body)
		}
	}
	start := url.Values{"external_id": {"5f1e"}, "STUDY_ID": {"st77"}, "SESSION_ID": {"se88"}}
	if res := a.do(c, "POST", "/s/pro/start", start, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	done := a.finishByForm(c, "pro")
	back := "https://app.prolific.com/submissions/complete?cc=C1A2B3"
	if !strings.Contains(done.body, `id="completion-code">C1A2B3<`) || !strings.Contains(done.body, `href="`+html.EscapeString(back)+`"`) ||
		done.Header.Get("Refresh") != "5; url="+back {
		t.Fatalf("done page: Refresh %q\n%s", done.Header.Get("Refresh"), done.body)
	}
	page := a.do(admin, "GET", "/admin/studies/pro", nil, nil)
	for _, want := range []string{"recruits on Prolific", "completion code C1A2B3", "SESSION_ID se88 · STUDY_ID st77"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("study page lacks %q", want)
		}
	}

	// Excluded before finishing: the screened-out code, and back to
	// Prolific with it.
	c2 := a.client()
	a.do(c2, "POST", "/s/pro/start", url.Values{"external_id": {"other"}}, nil)
	a.do(c2, "GET", "/s/pro/q", nil, nil)
	var pub string
	if err := a.pool.QueryRow(t.Context(), `SELECT public_id FROM participants WHERE external_id = 'other'`).Scan(&pub); err != nil {
		t.Fatal(err)
	}
	if res := a.do(admin, "POST", "/admin/studies/pro/participants/"+pub+"/exclude", url.Values{"excluded": {"1"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("exclude: %d %s", res.StatusCode, res.body)
	}
	done = a.finishByForm(c2, "pro")
	if !strings.Contains(done.body, `id="completion-code">SCR33N<`) || done.Header.Get("Refresh") != "5; url=https://app.prolific.com/submissions/complete?cc=SCR33N" {
		t.Fatalf("excluded participant's done page: Refresh %q\n%s", done.Header.Get("Refresh"), done.body)
	}
}

// A generic platform: the id comes from the study's own parameter, and the
// return address gets the code and the id, URL-escaped. A study without a
// platform sends no one anywhere.
func TestGenericPlatformStudy(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("gen", 5, 2, "open")
	admin := a.admin()
	form := url.Values{"title": {"Gen"}, "slug": {"gen"}, "questions_per_participant": {"2"}, "status": {"open"}, "design": {"random"},
		"platform": {"generic"}, "id_param": {"pid"}, "return_url": {"https://panel.example/done?c={code}&who={external_id}"}}
	if res := a.do(admin, "POST", "/admin/studies/gen", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.body)
	}
	c := a.client()
	res := a.do(c, "GET", "/s/gen?pid=a%26b+c&PROLIFIC_PID=ignored", nil, nil)
	if !strings.Contains(res.body, `name="external_id" value="a&amp;b c"`) {
		t.Fatalf("landing does not carry the pid:\n%s", res.body)
	}
	a.do(c, "POST", "/s/gen/start", url.Values{"external_id": {"a&b c"}}, nil)
	done := a.finishByForm(c, "gen")
	code := regexp.MustCompile(`id="completion-code">([A-Z0-9]+)<`).FindStringSubmatch(done.body)
	if code == nil {
		t.Fatalf("done page:\n%s", done.body)
	}
	want := "https://panel.example/done?c=" + code[1] + "&who=a%26b+c"
	if done.Header.Get("Refresh") != "5; url="+want || !strings.Contains(done.body, html.EscapeString(want)) {
		t.Fatalf("return address %q, want %q", done.Header.Get("Refresh"), want)
	}

	a.study("plain", 5, 1, "open")
	c = a.client()
	a.do(c, "POST", "/s/plain/start", url.Values{}, nil)
	if done := a.finishByForm(c, "plain"); done.Header.Get("Refresh") != "" || strings.Contains(done.body, "return-link") {
		t.Fatalf("a study without a platform sends the participant away: %q", done.Header.Get("Refresh"))
	}
}

// withField returns a copy of form with one field set to v.
func withField(form url.Values, field, v string) url.Values {
	c := url.Values{}
	for k, vs := range form {
		c[k] = append([]string(nil), vs...)
	}
	c.Set(field, v)
	return c
}

// The study form's help on the recruiting platforms: a paragraph per
// platform, each marked with the platform it is about (data-platforms, so
// app.js shows the chosen one's only; without JavaScript all show), in
// plain words: no repository path.
func TestStudyFormPlatformHelp(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	res := a.do(a.admin(), "GET", "/admin/studies/new", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("new study form: %d", res.StatusCode)
	}
	for _, path := range []string{"docs/", ".md", "internal/", ".go"} {
		if strings.Contains(res.body, path) {
			t.Errorf("the study form mentions %q", path)
		}
	}
	section := regexp.MustCompile(`(?s)<fieldset class="design-settings" id="platform-settings">.*?</fieldset>`).FindString(res.body)
	help := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<p class="muted" data-platforms="([^"]*)">(.*?)</p>`).FindAllStringSubmatch(section, -1) {
		help[m[1]] = m[2]
	}
	for platform, want := range map[string]string{
		"none": "you share the study's link yourself", "prolific": "PROLIFIC_PID", "mturk": "ExternalQuestion",
		"generic": "link parameter", "prolific mturk generic": "same participant id always continues",
	} {
		if !strings.Contains(help[platform], want) {
			t.Errorf("the help for %q lacks %q: %q", platform, want, help[platform])
		}
	}
	if len(help) != 5 {
		t.Errorf("%d platform help paragraphs, want 5: %v", len(help), help)
	}
	for platform, text := range help {
		for _, other := range []string{"<strong>none</strong>", "<strong>Prolific</strong>", "<strong>MTurk</strong>", "<strong>generic</strong>"} {
			if strings.Contains(text, other) && !strings.Contains(strings.ToLower(other), ">"+strings.ToLower(platform)+"<") {
				t.Errorf("the help for %q also describes %s", platform, other)
			}
		}
	}
	// The codes' notes: one per platform that has the field.
	for _, platform := range []string{"prolific", "mturk", "generic"} {
		if n := strings.Count(section, `<small data-platforms="`+platform+`">`); n != 2 {
			t.Errorf("%d notes for %s on the completion and screened-out codes, want 2", n, platform)
		}
	}
	// Every platform's settings are marked too, with known platforms only.
	for _, m := range regexp.MustCompile(`data-platforms="([^"]*)"`).FindAllStringSubmatch(section, -1) {
		for _, p := range strings.Fields(m[1]) {
			if p != "none" && p != "prolific" && p != "mturk" && p != "generic" {
				t.Errorf("data-platforms names %q", p)
			}
		}
	}
}
