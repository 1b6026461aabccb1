package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// The bundle import's form takes the new study's title: a bundle of a
// study that is here imported with a title gets it (and a free copy of the
// slug), without one "<title> (copy)"; the dashboard it lands on shows the
// new title, and the original keeps its own.
func TestImportBundleTitle(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	ctx := context.Background()
	st := a.study("orig", 6, 4, study.StatusOpen)
	if page := a.do(admin, "GET", "/admin/import", nil, nil); !strings.Contains(page.body, `name="title" maxlength="200"`) ||
		!strings.Contains(page.body, "Title of the new study") {
		t.Fatal("the bundle form asks for no title")
	}
	bundle := a.do(admin, "GET", "/admin/studies/orig/bundle.zip", nil, nil)
	if bundle.StatusCode != http.StatusOK {
		t.Fatalf("bundle: %d", bundle.StatusCode)
	}
	for _, c := range []struct {
		fields      map[string]string
		slug, title string
	}{
		{map[string]string{"title": "Second wave"}, "orig-copy", "Second wave"},
		{map[string]string{"title": ""}, "orig-copy-2", st.Title + " (copy)"},
		{map[string]string{"title": "Pilot B", "slug": "pilot-b"}, "pilot-b", "Pilot B"},
	} {
		res := a.upload(admin, "/admin/import/bundle", c.fields, []byte(bundle.body), "bundle.zip")
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/admin/studies/"+c.slug+"/dashboard") {
			t.Fatalf("import %v: %d %s %s", c.fields, res.StatusCode, res.Header.Get("Location"), res.body)
		}
		got, err := a.store.StudyBySlug(ctx, c.slug)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != c.title {
			t.Errorf("import %v: title %q, want %q", c.fields, got.Title, c.title)
		}
		if dash := a.do(admin, "GET", "/admin/studies/"+c.slug+"/dashboard", nil, nil); !strings.Contains(dash.body, "<h1>"+c.title+" <span") {
			t.Errorf("import %v: the dashboard does not show the title %q", c.fields, c.title)
		}
	}
	if orig, err := a.store.StudyBySlug(ctx, "orig"); err != nil || orig.Title != st.Title {
		t.Errorf("the original: %q, %v", orig.Title, err)
	}
}
