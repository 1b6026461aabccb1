package studyfile

import (
	"bytes"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/fuzzcorpus"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// FuzzBundleReader: whatever the zip, reading it as a bundle does not
// panic, every refusal is a user error (a 422 with a reason, never a 500),
// no file yields more rows than its limit, and a bundle read to its end has
// the rows its manifest counts, item indices 0..n-1, answers over those
// items, and images whose type, size and hash the checker derives again
// from their bytes.
func FuzzBundleReader(f *testing.F) {
	lim := BundleLimits{MaxImageBytes: 64 << 10, MaxItems: 20, MaxParticipants: 20, MaxAnswers: 50, MaxCSVBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		refused := func(err error) bool {
			if err == nil {
				return false
			}
			if collect.KindOf(err) != study.KindInvalid || err.Error() == "" {
				t.Fatalf("refused with a non-user error: %v", err)
			}
			return true
		}
		br, err := openBundle(bytes.NewReader(data), int64(len(data)), lim)
		if refused(err) {
			return
		}
		items, err := br.items()
		if refused(err) {
			return
		}
		defer items.Close()
		n := br.manifest.Counts["items"]
		seen := make([]bool, n)
		rows := 0
		for items.Next() {
			it := items.Value()
			rows++
			if rows > lim.MaxItems || it.Index < 0 || it.Index >= n || seen[it.Index] {
				t.Fatalf("item row %d: index %d of %d", rows, it.Index, n)
			}
			seen[it.Index] = true
			if it.Data == nil {
				if it.ContentType != "" {
					t.Fatalf("label-only item with type %q", it.ContentType)
				}
				continue
			}
			img, err := media.Check("again", it.Data, lim.MaxImageBytes)
			if err != nil || img.ContentType != it.ContentType || img.Width != it.Width || img.Height != it.Height || img.SHA256 != it.SHA256 {
				t.Fatalf("item %d stored as %s %d×%d, the bytes say %v %v", it.Index, it.ContentType, it.Width, it.Height, img.ContentType, err)
			}
		}
		if refused(items.Err()) {
			return
		}
		if rows != n {
			t.Fatalf("%d item rows, manifest counts %d", rows, n)
		}
		parts, err := br.participants()
		if refused(err) {
			return
		}
		defer parts.Close()
		rows = 0
		for parts.Next() {
			if rows++; rows > lim.MaxParticipants || parts.Value().Key == "" {
				t.Fatalf("participant row %d: %+v", rows, parts.Value())
			}
		}
		if refused(parts.Err()) {
			return
		}
		if rows != br.manifest.Counts["participants"] {
			t.Fatalf("%d participant rows, manifest counts %d", rows, br.manifest.Counts["participants"])
		}
		ans, err := br.answers(n)
		if refused(err) {
			return
		}
		defer ans.Close()
		rows = 0
		for ans.Next() {
			a := ans.Value()
			rows++
			for _, x := range []int{a.Anchor, a.Left, a.Right, a.Closer, a.Farther} {
				if x < 0 || x >= n {
					t.Fatalf("answer row %d names item %d of %d", rows, x, n)
				}
			}
			if rows > lim.MaxAnswers || a.Anchor == a.Left || a.Anchor == a.Right || a.Left == a.Right {
				t.Fatalf("answer row %d: %+v", rows, a)
			}
		}
		if refused(ans.Err()) {
			return
		}
		if rows != br.manifest.Counts["answers"] {
			t.Fatalf("%d answer rows, manifest counts %d", rows, br.manifest.Counts["answers"])
		}
	})
}

// TestFuzzSeedsCommitted keeps testdata/fuzz/FuzzBundleReader in step with
// bundleSeeds (-update-corpus rewrites it).
func TestFuzzSeedsCommitted(t *testing.T) {
	t.Parallel()
	fuzzcorpus.Check(t, "FuzzBundleReader", bundleSeeds(t))
}
