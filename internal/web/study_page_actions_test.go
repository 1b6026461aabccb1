package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The study page opens, pauses and closes the study in one click and says
// what happened; participants see the matching notice. Opening a study
// whose items have no images is refused on the page, with the reason.
func TestStudyStatusButtons(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("st", 5, 3, "draft")
	admin := a.admin()
	page := a.do(admin, "GET", "/admin/studies/st", nil, nil)
	if !strings.Contains(page.body, `name="status" value="open"`) || strings.Contains(page.body, `value="paused"`) {
		t.Fatalf("a draft study offers:\n%s", page.body)
	}
	for _, c := range []struct{ status, note, participantSees string }{
		{"open", "The study is open", "Start"},
		{"paused", "The study is paused", "is paused"},
		{"open", "The study is open", "Start"},
		{"closed", "The study is closed", "is closed"},
	} {
		res := a.do(admin, "POST", "/admin/studies/st/status", url.Values{"status": {c.status}}, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/studies/st?msg="+c.status {
			t.Fatalf("%s: %d %s", c.status, res.StatusCode, res.Header.Get("Location"))
		}
		page := a.do(admin, "GET", res.Header.Get("Location"), nil, nil)
		if !strings.Contains(page.body, c.note) || !strings.Contains(page.body, "status-"+c.status) {
			t.Fatalf("%s: the page does not say so:\n%s", c.status, page.body)
		}
		if got := a.do(a.client(), "GET", "/s/st", nil, nil); !strings.Contains(got.body, c.participantSees) {
			t.Fatalf("%s: participants see:\n%s", c.status, got.body)
		}
	}
	if n := a.count(`SELECT count(*) FROM studies WHERE id = $1 AND status = 'closed'`, st.ID); n != 1 {
		t.Fatal("the status is not stored")
	}
	if res := a.do(admin, "POST", "/admin/studies/st/status", url.Values{"status": {"saved"}}, nil); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("status saved: %d", res.StatusCode)
	}
	// A study imported from a triplet file has labels but no images.
	if _, err := a.pool.Exec(t.Context(), `UPDATE items SET data = NULL, content_type = '' WHERE study_id = $1 AND idx = 0`, st.ID); err != nil {
		t.Fatal(err)
	}
	res := a.do(admin, "POST", "/admin/studies/st/status", url.Values{"status": {"open"}}, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "no image") {
		t.Fatalf("opening a study without images: %d\n%s", res.StatusCode, res.body)
	}
}

// An upload ends in a redirect to the study page with its report: the
// page can be reloaded (the report is shown again, no file is sent
// again); another study's report or an unknown one is not shown.
func TestUploadRedirectsToItsReport(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.study("up1", 0, 3, "draft")
	a.study("up2", 0, 3, "draft")
	admin := a.admin()
	res := upload(t, a, admin, "up1", [][2]string{{"a.png", "not a png"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, "0 added, 1 rejected") {
		t.Fatalf("after the upload: %d\n%s", res.StatusCode, res.body)
	}
	var id string
	if err := a.pool.QueryRow(t.Context(), `SELECT id FROM upload_reports`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if again := a.do(admin, "GET", "/admin/studies/up1?upload="+id, nil, nil); !strings.Contains(again.body, "<strong>a.png</strong>: not an image") {
		t.Fatal("reloading the page loses the report")
	}
	if n := a.count(`SELECT count(*) FROM upload_reports`); n != 1 {
		t.Fatalf("%d reports after a reload, want 1", n)
	}
	for _, path := range []string{"/admin/studies/up2?upload=" + id, "/admin/studies/up1?upload=nope"} {
		page := a.do(admin, "GET", path, nil, nil)
		if page.StatusCode != http.StatusOK || strings.Contains(page.body, "a.png") || !strings.Contains(page.body, "has expired") {
			t.Fatalf("%s: %d\n%s", path, page.StatusCode, page.body)
		}
	}
}
