package studyfile

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// An imported study takes the title and slug the researcher gives; an
// empty one the bundle's own, and when the bundle's slug is taken here
// (a copy) the first free slug-copy, slug-copy-2, … with " (copy)" after
// the title. A slug given and taken is refused and stores nothing.
func TestImportBundleNames(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t) // slug "tiny", title "Tiny"
	imp := func(names BundleNames) (study.Study, error) {
		t.Helper()
		st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), names, BundleLimits{})
		return st, err
	}
	for _, c := range []struct {
		names       BundleNames
		slug, title string
	}{
		{BundleNames{}, "tiny", "Tiny"},                                    // the bundle's own: free
		{BundleNames{}, "tiny-copy", "Tiny (copy)"},                        // taken: a copy
		{BundleNames{Title: "  Second run "}, "tiny-copy-2", "Second run"}, // the title given, a free slug
		{BundleNames{Slug: "fresh"}, "fresh", "Tiny"},                      // a slug given: the original title
		{BundleNames{Slug: "named", Title: "Named"}, "named", "Named"},
	} {
		st, err := imp(c.names)
		if err != nil {
			t.Fatalf("%+v: %v", c.names, err)
		}
		got, err := s.StudyBySlug(ctx, c.slug)
		if err != nil {
			t.Fatalf("%+v: the study %q: %v", c.names, c.slug, err)
		}
		if st.Slug != c.slug || st.Title != c.title || got.ID != st.ID || got.Title != c.title {
			t.Errorf("%+v: imported %q %q (stored %q), want %q %q", c.names, st.Slug, st.Title, got.Title, c.slug, c.title)
		}
	}
	before := count(t, s, ctx)
	if _, err := imp(BundleNames{Slug: "fresh", Title: "Again"}); collect.KindOf(err) != study.KindConflict || !strings.Contains(err.Error(), `"fresh" is taken`) {
		t.Fatalf("a taken slug given: %v, want a conflict", err)
	}
	if n := count(t, s, ctx); n != before {
		t.Fatalf("a refused import left %d studies, had %d", n, before)
	}
}

// count counts the studies.
func count(t *testing.T, s *collect.Store, ctx context.Context) int {
	t.Helper()
	list, err := s.ListStudies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// A copy's slug and title stay within the store's bounds: a 64-character
// slug and a 200-byte title are cut (at a character boundary) to make room.
func TestCopyNamesFit(t *testing.T) {
	t.Parallel()
	if got := truncate("aé", 2); got != "a" {
		t.Errorf("truncate at a character boundary: %q", got)
	}
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	long := strings.Repeat("a", 56) + "-" + strings.Repeat("b", 7) // 64; its dash ends the cut for -copy-2
	title := strings.Repeat("é", 100)                              // 200 bytes
	parts := validParts()
	parts.study = `{"slug": "` + long + `", "title": "` + title + `", "questions_per_participant": 5, "status": "open", "design": "random"}`
	data := parts.zip(t)
	for range 2 {
		if _, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{}, BundleLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := long[:56] + "-copy-2"; st.Slug != want {
		t.Errorf("slug %q, want %q", st.Slug, want)
	}
	if want := strings.Repeat("é", 96) + " (copy)"; st.Title != want {
		t.Errorf("title %q (%d bytes), want %q", st.Title, len(st.Title), want)
	}
}
