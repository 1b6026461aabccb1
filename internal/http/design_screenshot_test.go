package http_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
)

// TestDesignScreenshots takes pictures of the design section of the study
// page for a basis study and a landmark-k1 study on the 40 demo disks, part
// way through a simulated crowd (answers from the disks' true hue and size,
// four participants at a time). It runs only when CLOSER_SCREENSHOTS names a
// directory (needs chromium):
//
//	CLOSER_SCREENSHOTS=$PWD/docs go test ./internal/http -run TestDesignScreenshots
func TestDesignScreenshots(t *testing.T) {
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
		cfg                 collect.DesignConfig
		answers             int
	}{
		{"basis", "Disks: basis discovery", collect.DesignBasis, collect.DesignConfig{Seed: 2, Repeats: 1, Extra: true}, 400},
		{"landmarks", "Disks: landmark k1", collect.DesignLandmarkK1, collect.DesignConfig{Seed: 2, Repeats: 2, Landmarks: 6}, 700},
	} {
		st, err := a.store.CreateStudy(ctx, collect.StudyInput{Slug: sc.slug, Title: sc.title, QuestionsPerParticipant: 25,
			Status: collect.StatusOpen, Design: sc.design, DesignConfig: sc.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()); err != nil {
			t.Fatal(err)
		}
		for given := 0; given < sc.answers; {
			var ps []int64
			var qs []*collect.Question
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
				closer := q.Left.Index
				if dist(q.Anchor.Index, q.Right.Index) < dist(q.Anchor.Index, q.Left.Index) {
					closer = q.Right.Index
				}
				if _, err := a.store.Answer(ctx, ps[i], collect.AnswerInput{QuestionID: q.ID, Closer: closer}); err != nil {
					t.Fatal(err)
				}
				given++
			}
		}
	}
	if _, err := a.store.CreateAdmin(ctx, "admin@example.com", "closer-demo"); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, 1200, 900)
	err := chromedp.Do(bctx,
		chromedp.Navigate(a.srv.URL+"/admin/studies/basis"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, "admin@example.com"),
		chromedp.SendKeys(`input[name=password]`, "closer-demo"),
		chromedp.Submit(`input[name=password]`),
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
	if err := chromedp.Do(bctx, chromedp.Navigate(a.srv.URL+"/admin/studies/new"), chromedp.WaitVisible(`fieldset.design-settings`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(bctx, chromedp.Screenshot(`fieldset.design-settings`))
	if err != nil {
		t.Fatal(err)
	}
	shots["screenshot-design-form.png"] = png
	for name, png := range shots {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
