package studyfile

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A text study (issue 29) travels in its bundle: exported with each
// item's kind and text, imported back with the same items (kind, label,
// text, sha256, order) and its setting of mixed kinds; the texts are
// checked on import as an upload's are, and a bundle whose text breaks a
// rule, or lies about its hash, is refused whole with the line.
func TestBundleTextRoundTrip(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "words", Title: "Words", QuestionsPerParticipant: 3,
		Status: study.StatusDraft, MixedKinds: true, PlayToEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	texts, err := media.ReadTextCSV(strings.NewReader("label,text\nd,dog\n,=cmd|' /C calc'!A0\n,<script>alert(1)</script>\n,שלום עולם\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTextItems(ctx, st.ID, texts, "w.csv", 0); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	again, rep, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 4 || !again.MixedKinds || !again.PlayToEnd {
		t.Fatalf("imported %+v, mixed kinds %v, play to end %v", rep, again.MixedKinds, again.PlayToEnd)
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
		if a.Kind != study.ItemText || a.Kind != b.Kind || a.Text != b.Text || a.Label != b.Label || a.SHA256 != b.SHA256 || a.Index != b.Index {
			t.Errorf("item %d: exported %+v, imported %+v", i, b, a)
		}
	}
	if after[1].Text != "=cmd|' /C calc'!A0" {
		t.Errorf("a formula-like text came back as %q", after[1].Text)
	}

	// Spoiled text rows are refused with the line, and store nothing.
	items := readZipFile(t, out.Bytes(), "items.csv")
	for _, c := range []struct {
		name, from, to, reason string
	}{
		{"a control character", ",dog\n", ",do\x07g\n", "items.csv line 2: text: a control character (U+0007)"},
		{"a bidi override", ",dog\n", ",do\u202Eg\n", "items.csv line 2: text: a bidirectional override character (U+202E)"},
		{"too long", ",dog\n", "," + strings.Repeat("g", 501) + "\n", "items.csv line 2: text: 501 characters"},
		{"empty", ",dog\n", ",\n", "items.csv line 2: text: empty"},
		{"a text that is not its hash", ",dog\n", ",cat\n", "items.csv line 2: the text does not match its sha256"},
		{"an unknown kind", ",text,dog\n", ",sound,dog\n", `items.csv line 2: kind "sound" is not one of image, text, audio, video`},
		{"an audio item with a text", ",text,dog\n", ",audio,dog\n", "items.csv line 2: a sound item with a text"},
		{"a video item with a text", ",text,dog\n", ",video,dog\n", "items.csv line 2: a video item with a text"},
	} {
		spoiled := strings.Replace(items, c.from, c.to, 1)
		if spoiled == items {
			t.Fatalf("%s: %q is not in items.csv:\n%s", c.name, c.from, items)
		}
		data := replaceZipFile(t, out.Bytes(), "items.csv", spoiled)
		_, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "spoiled"}, BundleLimits{})
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want a refusal with %q", c.name, err, c.reason)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM studies WHERE slug = 'spoiled'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused bundles stored %d studies (%v)", n, err)
	}
}

// A bundle whose items are of two kinds imports only into a study that
// allows mixed kinds: study.json without mixed_kinds is refused.
func TestBundleMixedKindsRefused(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	p := validParts()
	p.manifest = strings.Replace(p.manifest, `"version": 1`, `"version": 4`, 1)
	sum := media.TextSHA256("dog")
	p.items = "index,label,file_name,content_type,sha256,width,height,image,kind,text\n" +
		"0,a,a.png,image/png," + hexSum(testPNG(1)) + ",2,2,images/0-a.png,image,\n" +
		"1,b,b.png,image/png," + hexSum(testPNG(2)) + ",2,2,images/1-b.png,image,\n" +
		"2,dog,x:1," + media.TextContentType + "," + sum + ",0,0,,text,dog\n"
	data := p.zip(t)
	if _, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "m"}, BundleLimits{}); collect.KindOf(err) != study.KindInvalid ||
		!strings.Contains(err.Error(), "the items are of 2 kinds and the study does not allow mixed kinds") {
		t.Fatalf("a bundle of two kinds: %v, want a refusal", err)
	}
	p.study = strings.Replace(p.study, `"design": "random"`, `"design": "random", "mixed_kinds": true`, 1)
	data = p.zip(t)
	if _, rep, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "m"}, BundleLimits{}); err != nil || rep.Items != 3 {
		t.Fatalf("a bundle of two kinds that allows them: %+v, %v", rep, err)
	}
}

// readZipFile returns the file name of the zip data.
func readZipFile(t *testing.T, data []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replaceZipFile returns the zip data with the file name's content
// replaced (every other file copied as it is).
func replaceZipFile(t *testing.T, data []byte, name, content string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.Name == name {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(w, content); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
