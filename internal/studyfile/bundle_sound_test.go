package studyfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A study of sounds (issue 29) travels in its bundle: exported with each
// sound's bytes and type, imported back with the same items (kind, type,
// sha256, bytes); on import each sound is checked by its content as an
// upload's is, so a file that is not a sound, or not the sound its row
// names, refuses the bundle with the line and stores nothing.
func TestBundleSoundRoundTrip(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "sounds", Title: "Sounds", QuestionsPerParticipant: 3, Status: study.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	var ims []media.Image
	for _, f := range []struct{ file, mime string }{{"tone.wav", "audio/wav"}, {"tone.mp3", "audio/mpeg"}, {"tone.flac", "audio/flac"}} {
		data, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		im, err := media.Sound(f.file, data, f.mime)
		if err != nil {
			t.Fatal(err)
		}
		ims = append(ims, im)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, ims); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	again, rep, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 3 {
		t.Fatalf("imported %+v", rep)
	}
	before, err := s.ListItems(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.ListItems(ctx, again.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.Kind != study.ItemAudio || a.ContentType != b.ContentType || a.SHA256 != b.SHA256 || a.Label != b.Label || a.Index != b.Index {
			t.Errorf("item %d: exported %+v, imported %+v", i, b, a)
		}
	}

	// A sound file swapped for an image, or for another sound, refuses
	// the bundle with the item's line; nothing is stored.
	items := readZipFile(t, out.Bytes(), "items.csv")
	name, at := "", ""
	for i, line := range strings.Split(items, "\n") {
		if f := strings.Split(line, ","); i > 0 && len(f) > 7 && strings.HasSuffix(f[7], "tone.wav") {
			name, at = f[7], fmt.Sprintf("items.csv line %d: ", i+1)
		}
	}
	if name == "" {
		t.Fatalf("no file for tone.wav in items.csv:\n%s", items)
	}
	mp3, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", "tone.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, content, reason string
	}{
		{"an image", string(testPNG(1)), name + ": "},
		{"another sound", string(mp3), name + " does not match its sha256"},
	} {
		data := replaceZipFile(t, out.Bytes(), name, c.content)
		_, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "spoiled"}, BundleLimits{})
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), at+c.reason) {
			t.Errorf("%s: %v, want a refusal with %q", c.name, err, c.reason)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM studies WHERE slug = 'spoiled'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused bundles stored %d studies (%v)", n, err)
	}
}

// A study's longest sound travels in study.json (sound_max_seconds) and
// bounds the bundle's own sounds on import: the 5 s tone.mp3 imports under
// the exported limit, and is refused with the limit named when study.json
// says 1 s; a limit out of bounds refuses the bundle. Nothing is stored of
// a refused bundle.
func TestBundleSoundLimit(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "sounds", Title: "Sounds", QuestionsPerParticipant: 3, Status: study.StatusDraft, SoundMaxSeconds: 7})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", "tone.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := media.Sound("tone.mp3", data, "audio/mpeg")
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, []media.Image{im}); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	studyJSON := readZipFile(t, out.Bytes(), "study.json")
	if !strings.Contains(studyJSON, `"sound_max_seconds": 7`) && !strings.Contains(studyJSON, `"sound_max_seconds":7`) {
		t.Fatalf("study.json lacks the limit:\n%s", studyJSON)
	}
	again, rep, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil || rep.Items != 1 || again.SoundMaxSeconds != 7 {
		t.Fatalf("imported %+v, limit %d: %v", rep, again.SoundMaxSeconds, err)
	}
	for _, c := range []struct{ secs, reason string }{
		{"1", "lasts 5 s, the study's limit is 1 s"},
		{"601", "the longest sound must be between 1 and 600 seconds"},
		{"-3", "the longest sound must be between 1 and 600 seconds"},
	} {
		js := strings.Replace(strings.Replace(studyJSON, `"sound_max_seconds": 7`, `"sound_max_seconds": `+c.secs, 1), `"sound_max_seconds":7`, `"sound_max_seconds":`+c.secs, 1)
		b := replaceZipFile(t, out.Bytes(), "study.json", js)
		_, _, err := ImportBundle(ctx, s, bytes.NewReader(b), int64(len(b)), BundleNames{Slug: "short"}, BundleLimits{})
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("limit %s: %v, want a refusal with %q", c.secs, err, c.reason)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM studies WHERE slug = 'short'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused bundles stored %d studies (%v)", n, err)
	}
}
