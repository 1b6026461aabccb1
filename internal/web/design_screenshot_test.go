package web_test

import (
	"context"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// TestDesignScreenshots takes pictures of the design section of the study
// page for a basis study and a landmark-k1 study on the 40 demo disks, part
// way through a simulated crowd (answers from the disks' true hue and size,
// four participants at a time); then the study form's platform (Prolific,
// then MTurk), exclusion and quality sections, a Prolific participant's
// last page, an MTurk HIT's preview and an MTurk worker's last page. It
// runs only when CLOSER_SCREENSHOTS names a directory (needs chromium):
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/web -run TestDesignScreenshots
func TestDesignScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CLOSER_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CLOSER_SCREENSHOTS to a directory to take the screenshots (needs chromium)")
	}
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	ctx := context.Background()
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		return math.Hypot((coords[i][0]-coords[j][0])/270, (coords[i][1]-coords[j][1])/54)
	}
	for _, sc := range []struct {
		slug, title, design string
		cfg                 study.DesignConfig
		answers             int
	}{
		{"basis", "Disks: basis discovery", study.DesignBasis, study.DesignConfig{Seed: 2, Repeats: 1, Extra: true}, 400},
		{"landmarks", "Disks: landmark k1", study.DesignLandmarkK1, study.DesignConfig{Seed: 2, Repeats: 2, Landmarks: 6}, 700},
	} {
		st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: sc.slug, Title: sc.title, QuestionsPerParticipant: 25,
			Status: study.StatusOpen, Design: sc.design, DesignConfig: sc.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()); err != nil {
			t.Fatal(err)
		}
		for given := 0; given < sc.answers; {
			var ps []int64
			var qs []*study.Question
			for range 4 {
				p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				pr, err := a.store.Next(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				ps, qs = append(ps, p.ID), append(qs, pr.Question)
			}
			for i, q := range qs {
				closer := q.Options[0].Index
				if dist(q.Anchor.Index, q.Options[1].Index) < dist(q.Anchor.Index, q.Options[0].Index) {
					closer = q.Options[1].Index
				}
				if _, err := a.store.Answer(ctx, ps[i], study.AnswerInput{QuestionID: q.ID, Closer: closer}); err != nil {
					t.Fatal(err)
				}
				given++
			}
		}
	}
	bctx := newBrowser(t, 1200, 900)
	err := chromedp.Do(bctx,
		adminLogin(t, a, "/admin/studies/basis"),
		chromedp.WaitVisible(`#design`),
	)
	if err != nil {
		t.Fatal(err)
	}
	shots := map[string][]byte{}
	for _, slug := range []string{"basis", "landmarks"} {
		if err := chromedp.Do(bctx, chromedp.Navigate(a.srv.URL+"/admin/studies/"+slug), chromedp.WaitVisible(`#design`)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(bctx, chromedp.Screenshot(`#design`))
		if err != nil {
			t.Fatal(err)
		}
		shots["screenshot-design-"+slug+".png"] = png
	}
	// The new study form with a landmark design and Prolific chosen (the
	// form shows only their settings).
	if err := chromedp.Do(bctx, chromedp.Navigate(a.srv.URL+"/admin/studies/new"), chromedp.WaitVisible(`fieldset.design-settings`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
		for (const [n, v] of [["design", "landmark-k1"], ["platform", "prolific"]]) {
			const s = document.querySelector("select[name=" + n + "]"); s.value = v; s.dispatchEvent(new Event("change"));
		}
		document.querySelector("input[name=completion_code]").value = "C1A2B3C4";
		document.querySelector("input[name=fast_ms]").value = "400";
		document.querySelector("input[name=max_fast_pct]").value = "30";
		document.querySelector("input[name=max_side_pct]").value = "90";
		document.querySelector("input[name=catch_pct]").value = "10";
		document.querySelector("input[name=repeat_at]").value = "20, 40";
		document.querySelector("input[name=cant_decide]").checked = true;
		return true; })()`)); err != nil {
		t.Fatal(err)
	}
	for sel, name := range map[string]string{`#design-settings`: "screenshot-design-form.png",
		`#platform-settings`: "screenshot-platform-form.png", `#exclusion-settings`: "screenshot-exclusion-form.png",
		`#quality-settings`: "screenshot-quality-form.png", `#layout-settings`: "screenshot-layout-form.png"} {
		png, err := chromedp.Run(bctx, chromedp.Screenshot(sel))
		if err != nil {
			t.Fatal(err)
		}
		shots[name] = png
	}
	// The same form's platform settings with MTurk chosen: no completion
	// code (each worker gets their own), a screened-out code.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
		const s = document.querySelector("select[name=platform]"); s.value = "mturk"; s.dispatchEvent(new Event("change"));
		document.querySelector("input[name=completion_code]").value = "";
		document.querySelector("input[name=screened_out_code]").value = "SCR33N";
		return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if shots["screenshot-platform-form-mturk.png"], err = chromedp.Run(bctx, chromedp.Screenshot(`#platform-settings`)); err != nil {
		t.Fatal(err)
	}
	// A question laid out beside, on a 390 px phone.
	beside, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "beside", Title: "Disks beside", QuestionsPerParticipant: 5,
		Status: study.StatusOpen, Layout: study.LayoutBeside})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, beside.ID, demo.Items()[:5]); err != nil {
		t.Fatal(err)
	}
	phone := newBrowser(t, 800, 700)
	if err := chromedp.Do(phone, chromedp.EmulateViewport(390, 700, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(a.srv.URL+"/s/beside"),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question:not(.waiting)") !== null`)); err != nil {
		t.Fatal(err)
	}
	if shots["screenshot-layout-beside-phone.png"], err = chromedp.Run(phone, chromedp.Screenshot(`main`)); err != nil {
		t.Fatal(err)
	}
	// A Prolific participant's last page, before it sends them back.
	pro, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "pro", Title: "Disks on Prolific", QuestionsPerParticipant: 1,
		Debrief: "Thank you for taking part!", Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "C1A2B3C4"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, pro.ID, demo.Items()[:5]); err != nil {
		t.Fatal(err)
	}
	done := newBrowser(t, 800, 700)
	if err := chromedp.Do(done, chromedp.Navigate(a.srv.URL+"/s/pro?PROLIFIC_PID=5f1e2d&STUDY_ID=s1&SESSION_ID=x9"),
		chromedp.Click(`form.start button[type=submit]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`form.question`),
		pollJS(`document.querySelector("form.question:not(.waiting)") !== null`),
		chromedp.Click(`form.question button[data-key="1"]`)); err != nil {
		t.Fatal(err)
	}
	// The answer's reply sends the browser on to the done page; open it
	// afresh once the answer is stored (its Refresh leaves after 5 s).
	for a.count(`SELECT count(*) FROM answers WHERE study_id = $1`, pro.ID) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if err := chromedp.Do(done, chromedp.Navigate(a.srv.URL+"/s/pro/done"), chromedp.WaitVisible(`#completion-code`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(done, chromedp.Screenshot(`main`))
	if err != nil {
		t.Fatal(err)
	}
	shots["screenshot-prolific-done.png"] = png
	// An MTurk HIT as a worker previews it: the instructions and an
	// example question, nothing stored.
	mt, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "mt", Title: "Disks on MTurk", QuestionsPerParticipant: 20,
		Instructions: "Click the image that is **more similar** to the top one.", Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformMTurk}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, mt.ID, demo.Items()[:5]); err != nil {
		t.Fatal(err)
	}
	preview := newBrowser(t, 900, 900)
	if err := chromedp.Do(preview, chromedp.Navigate(a.srv.URL+"/s/mt?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3XAMPLEHIT"),
		chromedp.WaitVisible(`main`)); err != nil {
		t.Fatal(err)
	}
	if png, err = chromedp.Run(preview, chromedp.Screenshot(`main`)); err != nil {
		t.Fatal(err)
	}
	shots["screenshot-mturk-preview.png"] = png
	// An MTurk worker's last page: the code, and the form that submits the
	// assignment to turkSubmitTo's /mturk/externalSubmit (by itself after
	// 5 s; the picture is taken before).
	mtDone, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "mt-done", Title: "Disks on MTurk", QuestionsPerParticipant: 1,
		Debrief: "Thank you for your work!", Status: study.StatusOpen, Platform: study.Platform{Kind: study.PlatformMTurk}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, mtDone.ID, demo.Items()[:5]); err != nil {
		t.Fatal(err)
	}
	worker, token, err := a.store.CreateParticipant(ctx, mtDone.ID, "A1EXAMPLEWORKER", map[string]string{
		"assignmentId": "3EXAMPLEASSIGNMENT", "hitId": "3XAMPLEHIT", "turkSubmitTo": "https://workersandbox.mturk.com"})
	if err != nil {
		t.Fatal(err)
	}
	answerSome(t, a.store, worker, 1)
	last := newBrowser(t, 800, 700)
	if err := chromedp.Do(last, chromedp.Navigate(a.srv.URL+"/s/mt-done/done?participant_token="+url.QueryEscape(token)),
		chromedp.WaitVisible(`#mturk-submit`)); err != nil {
		t.Fatal(err)
	}
	if png, err = chromedp.Run(last, chromedp.Screenshot(`main`)); err != nil {
		t.Fatal(err)
	}
	shots["screenshot-mturk-done.png"] = png
	for name, png := range shots {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
