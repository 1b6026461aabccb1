package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// previewBanner is the text every page of a preview session shows.
const previewBanner = "Preview — answers are not part of the results."

// previewStudy creates a draft study on platform pl with a quota of one
// and the first six demo images.
func (a *app) previewStudy(slug string, pl study.Platform) study.Study {
	a.t.Helper()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: "Study " + slug, QuestionsPerParticipant: 3,
		Status: study.StatusDraft, Platform: pl, Quota: study.Quota{MaxParticipants: 1},
		Debrief: "Thanks."})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:6]); err != nil || len(rej) > 0 {
		a.t.Fatal(rej, err)
	}
	return st
}

// answerThrough answers the questions of the browser c's participant of
// study slug from path (the question page's, with its query) on, the
// left option each time, and returns the done page.
func (a *app) answerThrough(c *http.Client, slug, path string) response {
	a.t.Helper()
	for i := 0; i < 20; i++ {
		res := a.do(c, "GET", path, nil, nil)
		if res.StatusCode == http.StatusSeeOther && strings.Contains(res.Header.Get("Location"), "/done") {
			return a.do(c, "GET", res.Header.Get("Location"), nil, nil)
		}
		if res.StatusCode != http.StatusOK {
			a.t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.body)
		}
		if !strings.Contains(res.body, previewBanner) {
			a.t.Fatalf("question page %d of a preview without its banner:\n%s", i+1, res.body)
		}
		qid, closer := questionIDRE.FindStringSubmatch(res.body), closerRE.FindStringSubmatch(res.body)
		if qid == nil || closer == nil {
			a.t.Fatalf("no question on %s:\n%s", path, res.body)
		}
		form := url.Values{"question_id": {qid[1]}, "closer": {closer[1]}}
		if u, err := url.Parse(path); err == nil && u.Query().Get("participant_token") != "" {
			form.Set("participant_token", u.Query().Get("participant_token"))
		}
		if res := a.do(c, "POST", "/s/"+slug+"/answer", form, nil); res.StatusCode != http.StatusSeeOther {
			a.t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	a.t.Fatal("no done page after 20 questions")
	return response{}
}

// csvOf reads a CSV response.
func csvOf(t *testing.T, res response) [][]string {
	t.Helper()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", res.StatusCode, res.body)
	}
	recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A logged-in researcher previews a draft Prolific study with a quota of
// one from its page, without a Prolific id: every question page and the
// done page show the preview banner, the done page leads back to the
// study and not to Prolific; the study page marks the preview's row; the
// exports leave it out unless ?previews=1, whose preview column marks its
// rows; the arms still change and a real participant still gets the
// quota's place; the delete button deletes the preview and its answers.
func TestPreviewFromStudyPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.previewStudy("pv", study.Platform{Kind: study.PlatformProlific, CompletionCode: "PROLIFIC-DONE"})

	// Not logged in, or cross-origin: no preview.
	if res := a.do(a.client(), "POST", "/admin/studies/pv/preview", url.Values{}, nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a preview without login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	c := a.admin()
	if res := a.do(c, "POST", "/admin/studies/pv/preview", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site preview: %d", res.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM participants`); n != 0 {
		t.Fatalf("%d participants after refused previews", n)
	}

	page := a.do(c, "GET", "/admin/studies/pv", nil, nil)
	if !strings.Contains(page.body, `action="/admin/studies/pv/preview"`) || strings.Contains(page.body, "delete-previews") {
		t.Fatalf("study page before a preview: no preview button, or a delete button:\n%s", page.body)
	}
	res := a.do(c, "POST", "/admin/studies/pv/preview", url.Values{}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/pv/q" {
		t.Fatalf("start a preview: %d %s %s", res.StatusCode, res.Header.Get("Location"), res.body)
	}
	done := a.answerThrough(c, "pv", "/s/pv/q")
	if done.StatusCode != http.StatusOK || !strings.Contains(done.body, previewBanner) || !strings.Contains(done.body, "Thank you!") {
		t.Fatalf("the preview's done page: %d\n%s", done.StatusCode, done.body)
	}
	if strings.Contains(done.body, "prolific.com") || done.Header.Get("Refresh") != "" {
		t.Errorf("the preview's done page sends the researcher to Prolific:\n%s", done.body)
	}
	if n := a.count(`SELECT count(*) FROM answers a JOIN participants p ON p.id = a.participant_id WHERE p.preview`); n != 3 {
		t.Fatalf("the preview stored %d answers, want 3", n)
	}

	page = a.do(c, "GET", "/admin/studies/pv", nil, nil)
	if !strings.Contains(page.body, `class="preview-row"`) || !strings.Contains(page.body, `id="delete-previews"`) {
		t.Fatalf("study page after a preview: no marked row or no delete button:\n%s", page.body)
	}

	// Exports: none of the preview's rows by default; with ?previews=1
	// its rows, marked in the last column.
	for _, path := range []string{"/admin/studies/pv/triplets.csv", "/admin/studies/pv/triplets.csv?all_answers=1", "/admin/studies/pv/participants.csv"} {
		recs := csvOf(t, a.do(c, "GET", path, nil, nil))
		if len(recs) != 1 || recs[0][len(recs[0])-1] == study.PreviewColumn {
			t.Errorf("%s holds %d rows, columns %v; want only its header, without preview", path, len(recs), recs[0])
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		recs = csvOf(t, a.do(c, "GET", path+sep+"previews=1", nil, nil))
		if len(recs) < 2 || recs[0][len(recs[0])-1] != study.PreviewColumn {
			t.Fatalf("%s with previews: %d rows, columns %v", path, len(recs), recs[0])
		}
		for _, r := range recs[1:] {
			if r[len(r)-1] != "true" {
				t.Errorf("%s with previews: row %v not marked preview", path, r)
			}
		}
	}

	// Nothing froze: the arms can still be set, and a real participant
	// takes the quota's one place.
	if frozen, err := a.store.QuestionsIssued(context.Background(), st.ID); err != nil || frozen {
		t.Fatalf("QuestionsIssued after a preview: %t, %v", frozen, err)
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: study.StatusOpen, Platform: st.Platform,
		Quota: st.Quota, Arms: []study.Arm{{Name: "a", Design: study.DesignRandom, Share: 0.5}, {Name: "b", Design: study.DesignRandom, Share: 0.5}}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatalf("setting arms after a preview: %v", err)
	}
	real := a.client()
	if res := a.do(real, "POST", "/s/pv/start", url.Values{"external_id": {"PID-1"}}, nil); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/s/pv/q" {
		t.Fatalf("the first real participant of a quota of 1 after a preview: %d %s", res.StatusCode, res.body)
	}
	if q := a.do(real, "GET", "/s/pv/q", nil, nil); q.StatusCode != http.StatusOK || strings.Contains(q.body, "preview-banner") {
		t.Fatalf("a real participant's question page: %d, banner shown: %t", q.StatusCode, strings.Contains(q.body, "preview-banner"))
	}

	res = a.do(c, "POST", "/admin/studies/pv/previews/delete", url.Values{}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/studies/pv?msg=previews-deleted" {
		t.Fatalf("delete previews: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE preview`); n != 0 {
		t.Errorf("%d previews after deleting them", n)
	}
	if n := a.count(`SELECT count(*) FROM participants WHERE NOT preview`); n != 1 {
		t.Errorf("%d real participants after deleting the previews, want 1", n)
	}
	page = a.do(c, "GET", "/admin/studies/pv?msg=previews-deleted", nil, nil)
	if !strings.Contains(page.body, "The previews and their answers are deleted.") || strings.Contains(page.body, `id="delete-previews"`) {
		t.Errorf("study page after deleting the previews:\n%s", page.body)
	}
	// The deleted preview's browser is sent back to the study's start.
	if res := a.do(c, "GET", "/s/pv/q", nil, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/pv" {
		t.Errorf("a deleted preview's question page: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// On MTurk a preview's pages carry its token, as a worker's do, and need
// no MTurk parameters; a study without items cannot be previewed, and
// the study page says why.
func TestPreviewMTurkAndRefusal(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.previewStudy("mt", study.Platform{Kind: study.PlatformMTurk})
	c := a.admin()
	res := a.do(c, "POST", "/admin/studies/mt/preview", url.Values{}, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/s/mt/q?participant_token=") {
		t.Fatalf("start an MTurk preview: %d %s", res.StatusCode, loc)
	}
	done := a.answerThrough(a.client(), "mt", loc)
	if !strings.Contains(done.body, previewBanner) || strings.Contains(done.body, "mturk-submit") {
		t.Fatalf("the MTurk preview's done page:\n%s", done.body)
	}

	a.study("empty", 0, 3, study.StatusDraft)
	res = a.do(c, "POST", "/admin/studies/empty/preview", url.Values{}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "add at least three items") {
		t.Fatalf("preview of a study without items: %d\n%s", res.StatusCode, res.body)
	}
}
