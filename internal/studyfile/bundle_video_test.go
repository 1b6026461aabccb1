package studyfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A study of videos (issue 29) travels in its bundle as one of sounds
// does: exported with each video's bytes, type and picture size, imported
// back with the same items; on import each video is checked by its
// content, so a file that is not a video, or not the video its row names,
// refuses the bundle with the line and stores nothing.
func TestBundleVideoRoundTrip(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "videos", Title: "Videos", QuestionsPerParticipant: 3, Status: study.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	var ims []media.Image
	for _, f := range []string{"clip.mp4", "clip.webm"} {
		data, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		info, err := avfile.ProbeVideo(bytes.NewReader(data), int64(len(data)), avfile.DefaultVideo())
		if err != nil {
			t.Fatal(f, err)
		}
		im, err := media.Video(f, data, info.MIME, info.Width, info.Height)
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
	if rep.Items != 2 {
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
	if len(after) != len(before) {
		t.Fatalf("imported %d items of %d", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.Kind != study.ItemVideo || a.ContentType != b.ContentType || a.SHA256 != b.SHA256 || a.Label != b.Label ||
			a.Index != b.Index || a.Width != b.Width || a.Height != b.Height || a.Width == 0 {
			t.Errorf("item %d: exported %+v, imported %+v", i, b, a)
		}
	}

	items := readZipFile(t, out.Bytes(), "items.csv")
	name, at := "", ""
	for i, line := range strings.Split(items, "\n") {
		if f := strings.Split(line, ","); i > 0 && len(f) > 7 && strings.HasSuffix(f[7], "clip.mp4") {
			name, at = f[7], fmt.Sprintf("items.csv line %d: ", i+1)
		}
	}
	if name == "" {
		t.Fatalf("no file for clip.mp4 in items.csv:\n%s", items)
	}
	webm, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", "clip.webm"))
	if err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", "tone.wav"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, content, reason string
	}{
		{"an image", string(testPNG(1)), name + ": not a video file closer accepts"},
		{"a sound", string(wav), name + ": "},
		{"another video", string(webm), name + " does not match its sha256"},
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
