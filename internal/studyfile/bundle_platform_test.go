package studyfile

import (
	"bytes"
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A study's recruiting platform travels in its bundle's study.json and is
// the imported study's; a bundle without one (older, or a study without a
// platform) imports a study without one.
func TestBundleKeepsPlatform(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "plain"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Platform != (study.Platform{}) {
		t.Fatalf("a bundle without a platform imported %+v", st.Platform)
	}
	want := study.Platform{Kind: study.PlatformGeneric, IDParam: "pid", CompletionCode: "DONE1",
		ReturnURL: "https://panel.example/x?c={code}"}
	if _, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design, Platform: want}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	again, _, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Platform != want {
		t.Fatalf("imported platform %+v, want %+v", again.Platform, want)
	}
}

// A study's quality control settings travel in study.json too; a bundle
// without them imports a study with none.
func TestBundleKeepsQualitySettings(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "plain"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Quality.Active() {
		t.Fatalf("a bundle without quality control imported %+v", st.Quality)
	}
	want := study.QualityControl{CatchPercent: 10, RepeatAt: []int{2}, CantDecide: true}
	if _, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design, Quality: want}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	again, _, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Quality; got.CatchPercent != 10 || len(got.RepeatAt) != 1 || got.RepeatAt[0] != 2 || !got.CantDecide || got.RepeatPercent != 0 {
		t.Fatalf("imported quality control %+v, want %+v", got, want)
	}
}
