package web_test

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/closer-lab/closer/internal/study"
)

// The study page lists what to paste into the study's platform (issue 26:
// the Prolific URL and MTurk's XML were only help text with made-up
// values): on Prolific the study URL with Prolific's URL parameters and
// the completion code, each in a field with a copy button; and a QR
// code of the study link that decodes to it.
func TestStudyPageRecruitmentLinks(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	st := a.study("rec", 5, 3, "open")
	in := study.StudyInput{Slug: "rec", Title: "Rec", QuestionsPerParticipant: 3, Status: "open",
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "C0DE77"}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	page := a.do(admin, "GET", "/admin/studies/rec", nil, nil)
	link := a.srv.URL + "/s/rec"
	for _, want := range []string{
		`id="recruit-prolific-url" type="text" readonly value="` + html.EscapeString(link+"?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}") + `"`,
		`data-copy="recruit-prolific-url"`,
		`id="recruit-prolific-code" type="text" readonly value="C0DE77"`,
		`src="/admin/studies/rec/qr.png"`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the study page lacks %s", want)
		}
	}
	if t.Failed() {
		i := strings.Index(page.body, `id="recruit"`)
		t.Fatalf("recruit section:\n%.2500s", page.body[max(i, 0):])
	}

	res := a.do(admin, "GET", "/admin/studies/rec/qr.png", nil, nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("qr.png: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	img, err := png.Decode(bytes.NewReader([]byte(res.body)))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("the QR code does not decode: %v", err)
	}
	if got.GetText() != link {
		t.Errorf("the QR code says %q, want %q", got.GetText(), link)
	}
	// Not for anyone but an admin.
	if r := a.do(a.client(), "GET", "/admin/studies/rec/qr.png", nil, nil); r.StatusCode == http.StatusOK {
		t.Errorf("qr.png without a session: %d", r.StatusCode)
	}
}

// In a browser the copy button puts the field's text on the clipboard
// (the page's navigator.clipboard.writeText, replaced here by one that
// keeps what it was given: headless Chromium's clipboard needs a
// permission) and says so. Runs with CLOSER_BROWSER=1.
func TestBrowserRecruitCopyButton(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	st := a.study("rec", 5, 3, "open")
	in := study.StudyInput{Slug: "rec", Title: "Rec", QuestionsPerParticipant: 3, Status: "open",
		Platform: study.Platform{Kind: study.PlatformMTurk}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1280, 900)
	err := chromedp.Do(b, adminLogin(t, a, "/admin/studies/rec"),
		chromedp.WaitVisible(`#recruit summary`),
		chromedp.Click(`#recruit summary`),
		chromedp.WaitVisible(`button[data-copy="recruit-mturk-xml"]`),
		chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText = t => { window.copied = t; return Promise.resolve(); }`),
		chromedp.Click(`button[data-copy="recruit-mturk-xml"]`),
		pollJS(`document.querySelector('button[data-copy="recruit-mturk-xml"]').textContent === "Copied"`),
	)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := chromedp.Run(b, chromedp.Evaluate[string](`window.copied`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(copied, "<ExternalQuestion ") || !strings.Contains(copied, "<ExternalURL>"+a.srv.URL+"/s/rec</ExternalURL>") {
		t.Errorf("copied %q", copied)
	}
}
