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

// A study's language and text overrides travel in study.json; a bundle
// without them imports an English study without overrides, and one with
// an override of no known key is refused, naming the key.
func TestBundleKeepsLanguage(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "plain"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Language != "en" || st.TextOverrides != nil {
		t.Fatalf("a bundle without a language imported %q %v", st.Language, st.TextOverrides)
	}
	over := map[string]string{"landing.start": "Los!", "question.progress": "{answered}/{total}"}
	if _, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design,
		Language: "de", TextOverrides: over}); err != nil {
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
	if again.Language != "de" || len(again.TextOverrides) != 2 || again.TextOverrides["landing.start"] != "Los!" ||
		again.TextOverrides["question.progress"] != "{answered}/{total}" {
		t.Fatalf("imported %q %v", again.Language, again.TextOverrides)
	}

	p := validParts()
	p.study = strings.Replace(p.study, `"title"`, `"text_overrides": {"landing.strat": "Go"}, "title"`, 1)
	bad := p.zip(t)
	_, _, err = ImportBundle(ctx, s, bytes.NewReader(bad), int64(len(bad)), BundleNames{Slug: "bad"}, BundleLimits{})
	if err == nil || !strings.Contains(err.Error(), `"landing.strat"`) {
		t.Fatalf("a bundle overriding an unknown key: %v", err)
	}
}
