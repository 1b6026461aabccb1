package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// TestFormatSetting: the study form stores the question format (issue
// 27), refuses a format with a design that asks triplets only, a rank
// size outside 2 ≤ K < N ≤ 9 and the active design's triplet-only settings, takes
// the active design and repeat trials for every format, keeps
// the format when a post lacks it, and freezes it at the first question.
func TestFormatSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := func(slug, format string) url.Values {
		return url.Values{"slug": {slug}, "title": {"Format"}, "status": {"open"}, "design": {"random"},
			"questions_per_participant": {"5"}, "format": {format}, "rank_n": {"8"}, "rank_k": {"2"}}
	}
	for _, tc := range []struct{ slug, format, want string }{
		{"odd", "odd-one-out", "odd-one-out"}, {"rank", "rank", "rank:8:2"}, {"trip", "triplet", "triplet"}, {"none", "", "triplet"},
	} {
		if res := a.do(c, "POST", "/admin/studies", form(tc.slug, tc.format), nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("create %s: %d %s", tc.format, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
		if st, err := a.store.StudyBySlug(ctx, tc.slug); err != nil || st.Format != tc.want {
			t.Fatalf("%s: stored format %q, %v; want %q", tc.slug, st.Format, err, tc.want)
		}
	}
	refused := func(f url.Values, path string, status int, reason string) {
		t.Helper()
		res := a.do(c, "POST", path, f, nil)
		if res.StatusCode != status || !strings.Contains(res.body, html.EscapeString(reason)) {
			t.Fatalf("%v: %d %s; want %d %q", f, res.StatusCode, noticeRE.FindAllString(res.body, -1), status, reason)
		}
	}
	f := form("bad", "odd-one-out")
	f.Set("design", study.DesignLandmarkK1)
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, "the landmark-k1 design asks triplets only: odd-one-out studies use the random or the active design")
	f = form("bad", "odd-one-out")
	f.Set("design", study.DesignActive)
	f.Set("score", "infogain")
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, "the infogain score is triplet-only")
	f = form("bad", "rank")
	f.Set("design", study.DesignActive)
	f.Set("model", "ckl")
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, "the ckl answer model is triplet-only")
	// The active design chooses odd-one-out and rank trials (issue 27).
	for _, format := range []string{"odd-one-out", "rank"} {
		f = form("active-"+format, format)
		f.Set("design", study.DesignActive)
		if res := a.do(c, "POST", "/admin/studies", f, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("create an active %s study: %d %s", format, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
		if st, err := a.store.StudyBySlug(ctx, "active-"+format); err != nil || st.Design != study.DesignActive {
			t.Fatalf("active %s study: design %q, %v", format, st.Design, err)
		}
	}
	f = form("bad", "rank")
	f.Set("design", study.DesignBasis)
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, "the basis design asks triplets only")
	f = form("bad", "rank")
	f.Set("rank_k", "8")
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, "the choices must be fewer than the references")
	f = form("bad", "pairs")
	refused(f, "/admin/studies", http.StatusUnprocessableEntity, `unknown question format "pairs"`)
	// Repeat trials are taken (issue 27: the participant's own trial again).
	f = form("odd-repeats", "odd-one-out")
	f.Set("repeat_pct", "10")
	if res := a.do(c, "POST", "/admin/studies", f, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("an odd-one-out study with repeat trials: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}

	// A post without the field keeps the format.
	f = form("odd", "")
	f.Del("format")
	f.Set("title", "Kept")
	if res := a.do(c, "POST", "/admin/studies/odd", f, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update without the format: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st, err := a.store.StudyBySlug(ctx, "odd"); err != nil || st.Format != "odd-one-out" || st.Title != "Kept" {
		t.Fatalf("after a post without the format: %q %q, %v", st.Format, st.Title, err)
	}

	// Frozen at the first question, like the design.
	st, err := a.store.StudyBySlug(ctx, "trip")
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:4]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	questionPage(t, a, "trip")
	refused(form("trip", "odd-one-out"), "/admin/studies/trip", http.StatusUnprocessableEntity, "the question format cannot change after questions were issued")
}
