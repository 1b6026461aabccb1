package triplet

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/fuzzcorpus"
)

// csvSeeds are triplet files good and bad, and compact versions of the
// attacks on the importer (more rows than the limit, empty rows, quotes).
func csvSeeds() map[string][]byte {
	return map[string][]byte{
		"ints":            []byte("anchor,closer,farther,extra\n10,2,7,x\n2,10,7,y\n"),
		"synonyms-bom":    []byte("\ufeffLoser,Head,Winner\ncat,dog,wolf\n"),
		"participants":    []byte("anchor,closer,farther,participant,response_ms,answered_at\n1,2,3,w01,800,2026-01-01T00:00:00Z\n3,1,2,w02,,\n"),
		"bad-rows":        []byte("anchor,closer,farther\n1,2,3\n1,1,3\n4,5\n,2,3\n7,8,9\n"),
		"header-only":     []byte("anchor,closer,farther\n"),
		"no-header":       []byte("1,2,3\n4,5,6\n"),
		"quotes":          []byte("anchor,closer,farther\n\"a,1\",\"b\"\"2\",\"c\n3\"\n\"unterminated,x,y\n"),
		"ties":            []byte("anchor,closer,farther\n01,1,2\n2,1,01\n"),
		"nul":             []byte("anchor,closer,farther\na\x00,b,c\n"),
		"over-row-limit":  []byte("anchor,closer,farther\n" + strings.Repeat("1,2,3\n", 300)),
		"empty-fields":    []byte("anchor,closer,farther\n" + strings.Repeat(",,\n", 300)),
		"blank-lines":     []byte("anchor,closer,farther\n" + strings.Repeat("\n", 300) + "1,2,3\n"),
		"spaces-and-crlf": []byte(" anchor , closer , farther \r\n 1 , 2 , 3 \r\n"),
		// The fuzzer's: a formula quote before a carriage return keeps
		// the id "\r0", as it keeps " =2" (TestCLIOutputsNeutraliseFormulas).
		"quote-before-cr": []byte("AnChor,Closer,fArther\n'\r0,1,0"),
	}
}

// FuzzReadCSV: ReadCSVWith does not panic on any input; it refuses more
// rows than MaxRows with a *csvlimit.LimitError; what it accepts has
// distinct ids in the documented order, triplets over them with three
// different items, no more of them than rows allowed, and it reads back to
// the same set after WriteCSV.
func FuzzReadCSV(f *testing.F) {
	const maxRows = 100
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadCSVWith(bytes.NewReader(data), ReadOptions{MaxRows: maxRows})
		if err != nil {
			var le *csvlimit.LimitError
			if errors.As(err, &le) && le.What == "rows" && le.Limit != maxRows {
				t.Fatalf("row limit %d", le.Limit)
			}
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		if len(s.Triplets) == 0 || len(s.Triplets) > maxRows {
			t.Fatalf("%d triplets", len(s.Triplets))
		}
		seen := map[string]bool{}
		for _, id := range s.IDs {
			// White space at an id's ends comes only from behind a
			// formula quote (readID), which Cell puts back on writing.
			if seen[id] || id == "" || (id != strings.TrimSpace(id) && !csvsafe.Risky(id)) {
				t.Fatalf("id %q repeated, empty or untrimmed", id)
			}
			seen[id] = true
		}
		sorted := append([]string(nil), s.IDs...)
		SortIDs(sorted)
		if strings.Join(sorted, "\x00") != strings.Join(s.IDs, "\x00") {
			t.Fatalf("ids %q are not in ReadCSV's order", s.IDs)
		}
		for _, tr := range s.Triplets {
			for _, x := range []int{tr.Anchor, tr.Closer, tr.Farther} {
				if x < 0 || x >= s.N() {
					t.Fatalf("triplet %v over %d items", tr, s.N())
				}
			}
			if tr.Anchor == tr.Closer || tr.Anchor == tr.Farther || tr.Closer == tr.Farther {
				t.Fatalf("triplet %v repeats an item", tr)
			}
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, s.IDs, s.Triplets); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(&buf)
		if err != nil {
			t.Fatalf("written set does not read back: %v", err)
		}
		if strings.Join(back.IDs, "\x00") != strings.Join(s.IDs, "\x00") || len(back.Triplets) != len(s.Triplets) {
			t.Fatalf("round trip: ids %q became %q", s.IDs, back.IDs)
		}
		for i := range s.Triplets {
			if back.Triplets[i] != s.Triplets[i] {
				t.Fatalf("round trip: triplet %d %v became %v", i, s.Triplets[i], back.Triplets[i])
			}
		}
	})
}

func TestReadCSVRowLimit(t *testing.T) {
	t.Parallel()
	in := "anchor,closer,farther\n" + strings.Repeat("1,2,3\n", 101)
	_, err := ReadCSVWith(strings.NewReader(in), ReadOptions{MaxRows: 100})
	var le *csvlimit.LimitError
	if !errors.As(err, &le) || err.Error() != "more than 100 rows (the limit)" {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadCSVWith(strings.NewReader(in), ReadOptions{MaxRows: 101}); err != nil {
		t.Fatal(err)
	}
}

// TestFuzzSeedsCommitted keeps testdata/fuzz/FuzzReadCSV in step with
// csvSeeds (-update-corpus rewrites it).
func TestFuzzSeedsCommitted(t *testing.T) {
	t.Parallel()
	fuzzcorpus.Check(t, "FuzzReadCSV", csvSeeds())
}
