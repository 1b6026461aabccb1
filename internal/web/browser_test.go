package web_test

import (
	"archive/zip"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/demo"
)

// newBrowser starts headless Chromium for a test, with extra options if
// given.
func newBrowser(t *testing.T, width, height int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	opts = append(opts, extra...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	return bctx
}

// adminLogin creates the admin admin@example.com and returns the step that
// opens path (an admin page) in a browser and logs in on the login page it
// shows, which then goes on to path.
func adminLogin(t *testing.T, a *app, path string) chromedp.Action[chromedp.Void] {
	t.Helper()
	if _, err := a.accounts.CreateAdmin(context.Background(), "admin@example.com", "closer-demo"); err != nil {
		t.Fatal(err)
	}
	return chromedp.Steps(
		chromedp.Navigate(a.srv.URL+path),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, "admin@example.com"),
		chromedp.SendKeys(`input[name=password]`, "closer-demo"),
		chromedp.Submit(`input[name=password]`),
	)
}

func pollJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))
}

// pollAcrossLoads polls expr until it is true or timeout has passed, while
// the page may be loading another: a load ends a poll in flight ("Cannot
// find context with specified id": the old page's JavaScript context is
// gone), and then it polls again on the new page.
func pollAcrossLoads(ctx context.Context, expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(10*time.Second)))
		if err == nil || time.Until(deadline) <= 0 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBrowserNewUser does in headless Chromium what a new researcher does:
// log in, create a study, upload a zip, open the study, answer all its
// questions by clicking, and download the CSV. It runs when CLOSER_BROWSER=1
// (it needs chromium: apt-get install -y chromium).
func TestBrowserNewUser(t *testing.T) {
	t.Parallel()
	if os.Getenv("CLOSER_BROWSER") == "" {
		t.Skip("set CLOSER_BROWSER=1 to run the browser test (needs chromium)")
	}
	a := newApp(t)
	if _, err := a.accounts.CreateAdmin(context.Background(), "new@example.org", "first-password"); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "shapes.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i, im := range demo.Items()[:6] {
		w, _ := zw.Create(fmt.Sprintf("shapes/shape-%d.png", i+1))
		w.Write(im.Data)
	}
	w, _ := zw.Create("shapes/notes.txt")
	w.Write([]byte("not an image"))
	zw.Close()
	f.Close()

	b := newBrowser(t, 1000, 900)
	err = chromedp.Do(b,
		chromedp.Navigate(a.srv.URL+"/admin"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, "new@example.org"),
		chromedp.SendKeys(`input[name=password]`, "first-password"),
		chromedp.Submit(`input[name=password]`),
		chromedp.WaitVisible(`a[href="/admin/studies/new"]`),
		chromedp.Click(`a[href="/admin/studies/new"]`),
		chromedp.WaitVisible(`input[name=title]`),
		chromedp.SendKeys(`input[name=title]`, "Shapes"),
		chromedp.SendKeys(`input[name=slug]`, "shapes"),
		chromedp.SendKeys(`textarea[name=instructions]`, "Compare the *shapes*."),
		chromedp.SetValue(`input[name=questions_per_participant]`, "4"),
		chromedp.SetValue(`select[name=status]`, "open"),
		chromedp.Submit(`input[name=title]`),
		chromedp.WaitVisible(`input[name=files]`),
		chromedp.SetUploadFiles(`input[name=files]`, []string{zipPath}),
		chromedp.Submit(`input[name=files]`),
		chromedp.WaitVisible(`.report`),
	)
	if err != nil {
		t.Fatal(err)
	}
	report, err := chromedp.Run(b, chromedp.Text(`.report`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "6 added, 1 rejected") || !strings.Contains(report, "shapes/notes.txt: not an image") {
		t.Fatalf("upload report: %q", report)
	}
	publicURL, err := chromedp.Run(b, chromedp.Text(`main p a`))
	if err != nil {
		t.Fatal(err)
	}
	if publicURL != a.srv.URL+"/s/shapes" {
		t.Fatalf("public link %q", publicURL)
	}
	err = chromedp.Do(b,
		chromedp.Navigate(publicURL),
		chromedp.Click(`button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		sel := `form.question button[data-key="1"]`
		if i%2 == 1 {
			sel = `form.question button[data-key="2"]`
		}
		var next chromedp.Action[chromedp.Void]
		if i < 3 {
			next = pollJS(fmt.Sprintf(`document.querySelector(".progress-text") && document.querySelector(".progress-text").textContent === "%d of 4"`, i+1))
		} else {
			next = chromedp.WaitVisible(`#completion-code`) // the done page is a navigation
		}
		if err := chromedp.Do(b, pollJS(`document.querySelector("form.question:not(.sending):not(.waiting)") !== null`), chromedp.Click(sel), next); err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
	}
	code, err := chromedp.Run(b, chromedp.Text(`#completion-code`))
	if err != nil || len(code) != 10 {
		t.Fatalf("completion code %q %v", code, err)
	}
	// Download the CSV as the logged-in researcher would (same cookies).
	body, err := chromedp.Run(b, chromedp.Evaluate[string](
		`fetch("/admin/studies/shapes/triplets.csv").then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[1][0] != "shapes" {
		t.Fatalf("CSV: %v", recs)
	}
	if n := a.count(`SELECT count(*) FROM answers a JOIN participants p ON p.id = a.participant_id WHERE p.completion_code = $1`, code); n != 4 {
		t.Fatalf("%d answers of the browser's participant, want 4", n)
	}
}
