// Package fuzzcorpus keeps a fuzz target's committed seed corpus
// (testdata/fuzz/<Target>/<name>, the files go test reads) in step with
// seeds built in code, so attack inputs made by a test's builders are
// committed as files and cannot silently go missing. For tests only.
package fuzzcorpus

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update-corpus", false, "rewrite the committed fuzz seed corpus files")

// MaxSeedBytes bounds one committed seed file.
const MaxSeedBytes = 16 << 10

// Encode returns the corpus file of one []byte input.
func Encode(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}

// Check fails unless testdata/fuzz/<target> holds each seed as a file named
// by its key (with -update-corpus it writes them).
func Check(t *testing.T, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	for name, data := range seeds {
		want := Encode(data)
		if len(want) > MaxSeedBytes {
			t.Errorf("%s/%s: the seed file would be %d bytes (at most %d)", target, name, len(want), MaxSeedBytes)
			continue
		}
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or out of date (go test -run TestFuzzSeedsCommitted -update-corpus)", path)
		}
	}
}
