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

// A study's question layout (issue 26) travels in study.json: a study laid
// out beside is imported beside; a bundle without the setting (older)
// imports a study laid out above, and one with an unknown layout is
// refused with the store's words.
func TestBundleKeepsLayout(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "plain"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Layout != study.LayoutAbove {
		t.Fatalf("a bundle without a layout imported %q, want %q", st.Layout, study.LayoutAbove)
	}
	if _, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design, Layout: study.LayoutBeside}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	br, err := openBundle(bytes.NewReader(out.Bytes()), int64(out.Len()), BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if br.study.Layout != study.LayoutBeside {
		t.Fatalf("study.json has the layout %q, want %q", br.study.Layout, study.LayoutBeside)
	}
	again, _, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Layout != study.LayoutBeside {
		t.Fatalf("imported layout %q, want %q", again.Layout, study.LayoutBeside)
	}
	bad := validParts()
	bad.study = strings.Replace(bad.study, `"design": "random"`, `"design": "random", "layout": "sideways"`, 1)
	data = bad.zip(t)
	if _, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "bad"}, BundleLimits{}); collect.KindOf(err) != study.KindInvalid {
		t.Fatalf("a bundle laid out sideways: %v, want a KindInvalid refusal", err)
	}
}
