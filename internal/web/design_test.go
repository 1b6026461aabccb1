package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// The study form offers the designs with their settings, refuses bad ones
// with a message, shows the landmark design's size before the study opens,
// freezes the settings once questions were issued, and the study page
// shows the progress.
func TestDesignSettingsForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := func(design string, kv ...string) url.Values {
		f := url.Values{"title": {"Shapes"}, "slug": {"shapes"}, "questions_per_participant": {"20"},
			"status": {"draft"}, "design": {design}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	if res := a.do(c, "GET", "/admin/studies/new", nil, nil); !strings.Contains(res.body, `value="landmark-k1"`) ||
		!strings.Contains(res.body, `value="basis"`) || !strings.Contains(res.body, `name="landmark_picks"`) {
		t.Fatalf("the new study form lacks the designs or their settings")
	}
	for _, tc := range []struct {
		name string
		f    url.Values
		msg  string
	}{
		{"one landmark", form("landmark-k1", "landmarks", "1"), "at least 2 landmarks"},
		{"no landmarks", form("landmark-k2", "landmarks", ""), "at least 2 landmarks"},
		{"too many landmarks", form("landmark-k1", "landmarks", "5000"), "at most 1000 landmarks"},
		{"labels without items", form("landmark-k1", "landmark_picks", "cat, dog"), "upload the items before picking landmarks"},
		{"even basis repeats", form("basis", "repeats", "2"), "basis design"},
		{"bad seed", form("basis", "seed", "12x"), "the seed must be a whole number"},
		{"unknown coordinate rule", form("basis", "coordinates", "diagonal"), "unknown coordinate rule"},
		{"bad repeats", form("landmark-k1", "landmarks", "3", "repeats", "lots"), "repeats must be a whole number"},
		{"repeats too large", form("landmark-k1", "landmarks", "3", "repeats", "300"), "repeats must be between 1 and 255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := a.do(c, "POST", "/admin/studies", tc.f, nil)
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, tc.msg) {
				t.Errorf("%d, want 422 with %q", res.StatusCode, tc.msg)
			}
		})
	}
	if n := a.count(`SELECT count(*) FROM studies`); n != 0 {
		t.Fatalf("%d studies stored from invalid forms", n)
	}

	// A landmark-k1 study with 3 random landmarks over 10 items:
	// (n−L)·C(L,2) + L·C(L−1,2) = 7·3 + 3·1 = 24 comparisons.
	if res := a.do(c, "POST", "/admin/studies", form("landmark-k1", "landmarks", "3", "seed", "9"), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, res.body)
	}
	st, err := a.store.StudyBySlug(ctx, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:10]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	items, err := a.store.ListItems(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := a.do(c, "GET", "/admin/studies/shapes", nil, nil)
	if !strings.Contains(res.body, "24 comparisons × 1 = 24 answers") || !strings.Contains(res.body, "Landmarks (3)") {
		t.Fatalf("study page does not show the planned size and landmarks")
	}

	// Picked landmarks: an unknown label is named; labels and indices work.
	res = a.do(c, "POST", "/admin/studies/shapes", form("landmark-k1", "landmark_picks", "no-such-item, 1", "seed", "9"), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "unknown landmark") || !strings.Contains(res.body, "no-such-item") {
		t.Fatalf("unknown label: %d", res.StatusCode)
	}
	res = a.do(c, "POST", "/admin/studies/shapes", form("landmark-k1", "landmark_picks", "1, 1", "seed", "9"), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "picked twice") {
		t.Fatalf("duplicate pick: %d", res.StatusCode)
	}
	picks := items[0].Label + ", " + items[4].Label + ", 7"
	res = a.do(c, "POST", "/admin/studies/shapes", form("landmark-k2", "landmark_picks", picks, "repeats", "2", "seed", "9", "status", "open"), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update with picked landmarks: %d %s", res.StatusCode, res.body)
	}
	// k2: (n−L)·L(L−1) + L·C(L−1,2) = 7·6 + 3·1 = 45 comparisons.
	res = a.do(c, "GET", "/admin/studies/shapes", nil, nil)
	if !strings.Contains(res.body, "45 comparisons × 2 = 90 answers") || !strings.Contains(res.body, "4 · "+items[4].Label) {
		t.Fatalf("study page after picking: size or landmarks missing")
	}
	shown := items[0].Label + ", " + items[4].Label + ", " + items[7].Label
	if res := a.do(c, "GET", "/admin/studies/shapes/edit", nil, nil); !strings.Contains(res.body, `value="`+shown+`"`) {
		t.Fatalf("edit form does not show the picked landmarks as %q", shown)
	}

	// A question issued: the settings are frozen, the page shows progress.
	p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := a.store.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Question.Design != study.DesignLandmarkK2 {
		t.Fatalf("first question's design %q", pr.Question.Design)
	}
	if _, err := a.store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	if err := a.store.RecordPending(ctx); err != nil { // the design records it shortly after
		t.Fatal(err)
	}
	res = a.do(c, "POST", "/admin/studies/shapes", form("landmark-k2", "landmark_picks", picks, "repeats", "3", "seed", "9", "status", "open"), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "cannot change after questions were issued") {
		t.Fatalf("changing repeats after a question: %d", res.StatusCode)
	}
	res = a.do(c, "POST", "/admin/studies/shapes", form("landmark-k2", "landmark_picks", picks, "repeats", "2", "seed", "9", "status", "paused"), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pausing with unchanged settings: %d %s", res.StatusCode, res.body)
	}
	res = a.do(c, "GET", "/admin/studies/shapes", nil, nil)
	for _, want := range []string{"Coverage", "1 of 90 answers", "Fallback share", "0 of 1 answers were random fallbacks"} { //nolint:paralleltest // a loop of checks, not a table of subtests
		if !strings.Contains(res.body, want) {
			t.Errorf("study page lacks %q", want)
		}
	}
}

// A basis study takes the rank-difference coordinates unless the form asks
// for the paper's median rule; the edit form and the study page say which,
// and a landmark study keeps no coordinate rule.
func TestBasisCoordinateRuleSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := func(slug, design string, kv ...string) url.Values {
		f := url.Values{"title": {"Shapes"}, "slug": {slug}, "questions_per_participant": {"20"},
			"status": {"draft"}, "design": {design}, "seed": {"4"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	rule := func(slug string) string {
		st, err := a.store.StudyBySlug(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := a.store.DesignConfigOf(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		return dc.Coordinates
	}
	for _, tc := range []struct{ slug, design, field, want, page string }{
		{"plain", "basis", "", "rank-difference", "coordinates by rank difference"},
		{"paper", "basis", "median", "median", "coordinates by median index in the lens"},
		{"marks", "landmark-k1", "median", "", ""},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			t.Parallel()
			f := form(tc.slug, tc.design, "landmarks", "3")
			if tc.field != "" {
				f.Set("coordinates", tc.field)
			}
			if res := a.do(c, "POST", "/admin/studies", f, nil); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("create: %d %s", res.StatusCode, res.body)
			}
			if got := rule(tc.slug); got != tc.want {
				t.Errorf("stored rule %q, want %q", got, tc.want)
			}
			if tc.page == "" {
				return
			}
			if res := a.do(c, "GET", "/admin/studies/"+tc.slug, nil, nil); !strings.Contains(res.body, tc.page) {
				t.Errorf("study page lacks %q", tc.page)
			}
			res := a.do(c, "GET", "/admin/studies/"+tc.slug+"/edit", nil, nil)
			if !strings.Contains(res.body, `<option value="`+tc.want+`" selected`) {
				t.Errorf("edit form does not select %q", tc.want)
			}
		})
	}
}
