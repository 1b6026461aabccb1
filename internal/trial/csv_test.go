package trial

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/fuzzcorpus"
	"github.com/closer-lab/closer/internal/triplet"
)

func TestReadOddOneOut(t *testing.T) {
	t.Parallel()
	in := "odd,item2,item1,item3,who\n10,2,10,7,w1\n 2 , 7 , 10 , 2 ,w2\n"
	s, err := ReadOddOneOut(strings.NewReader(in), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// ids in numeric order: 2 → 0, 7 → 1, 10 → 2.
	if !slices.Equal(s.IDs, []string{"2", "7", "10"}) {
		t.Fatalf("ids %q", s.IDs)
	}
	want := []OddOneOut{{Items: [3]int{2, 0, 1}, Odd: 2}, {Items: [3]int{2, 1, 0}, Odd: 0}}
	if !slices.Equal(s.Trials, want) {
		t.Fatalf("trials %v, want %v", s.Trials, want)
	}
	var buf bytes.Buffer
	if err := WriteOddOneOut(&buf, s.IDs, s.Trials); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "item1,item2,item3,odd\n10,2,7,10\n10,7,2,2\n" {
		t.Fatalf("written %q", got)
	}
}

func TestReadOddOneOutBadRows(t *testing.T) {
	t.Parallel()
	in := "item1,item2,item3,odd\na,b,c,a\na,a,c,a\na,b\na,b,c,d\n,b,c,b\n\"x,y,z\n"
	_, err := ReadOddOneOut(strings.NewReader(in), ReadOptions{})
	var ce *triplet.CSVError
	if !errors.As(err, &ce) || ce.Total != 5 {
		t.Fatalf("got %v", err)
	}
	want := []int{3, 4, 5, 6, 7}
	for k, r := range ce.Rows {
		if r.Line != want[k] {
			t.Errorf("row %d: line %d (%s), want %d", k, r.Line, r.Reason, want[k])
		}
	}
	if !strings.Contains(ce.Rows[2].Reason, "not one of the items shown") {
		t.Errorf("reason %q", ce.Rows[2].Reason)
	}
	if _, err := ReadOddOneOut(strings.NewReader("item1,item2,odd\n1,2,1\n"), ReadOptions{}); err == nil {
		t.Error("a header without item3 accepted")
	}
	_, err = ReadOddOneOut(strings.NewReader("item1,item2,item3,odd\n"+strings.Repeat("1,2,3,1\n", 11)), ReadOptions{MaxRows: 10})
	var le *csvlimit.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("row limit: %v", err)
	}
}

func TestReadRank(t *testing.T) {
	t.Parallel()
	in := "query,option1,option2,option3,choice1,choice2\nq,a,b,c,c,a\nb,q,a,c,a,q\n"
	s, err := ReadRank(strings.NewReader(in), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec != (RankSpec{N: 3, K: 2}) || !slices.Equal(s.IDs, []string{"a", "b", "c", "q"}) {
		t.Fatalf("spec %v ids %q", s.Spec, s.IDs)
	}
	if tr := s.Trials[0]; tr.Query != 3 || !slices.Equal(tr.Options, []int{0, 1, 2}) || !slices.Equal(tr.Choices, []int{2, 0}) {
		t.Fatalf("trial 0 %+v", tr)
	}
	var buf bytes.Buffer
	if err := WriteRank(&buf, s.IDs, s.Spec, s.Trials); err != nil {
		t.Fatal(err)
	}
	if buf.String() != in {
		t.Fatalf("written %q", buf.String())
	}
	bad := "query,option1,option2,option3,choice1,choice2\nq,a,b,c,c,\nq,a,b,c,d,a\nq,a,b,c,a,a\nq,a,a,c,a,c\nq,q,b,c,b,c\nq,a,b,c,a,b\n"
	_, err = ReadRank(strings.NewReader(bad), ReadOptions{})
	var ce *triplet.CSVError
	if !errors.As(err, &ce) || ce.Total != 5 {
		t.Fatalf("got %v", err)
	}
	for k, want := range []string{"too few choices", "not one of the references", "chosen twice", "shown twice", "also option1"} {
		if ce.Rows[k].Line != k+2 || !strings.Contains(ce.Rows[k].Reason, want) {
			t.Errorf("row %d: %v, want line %d %q", k, ce.Rows[k], k+2, want)
		}
	}
	for _, h := range []string{"query,option1,option2,choice1,choice2\n", "query,option1,option2,option3,choice1\n"} {
		if _, err := ReadRank(strings.NewReader(h+"q,a,b,a,b\n"), ReadOptions{}); err == nil {
			t.Errorf("header %q accepted", h)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ head, want string }{
		{"anchor,closer,farther\n1,2,3\n", "triplet"},
		{"head,winner,loser", "triplet"},
		{"\ufeffITEM1,item2,item3,Odd\n1,2,3,1\n", "odd-one-out"},
		{"query,option1,option2,option3,option4,option5,option6,option7,option8,choice1,choice2\n", "rank:8:2"},
	} {
		k, r, err := Sniff(strings.NewReader(c.head))
		if err != nil || k.String() != c.want {
			t.Errorf("%q: %v, %v", c.head, k, err)
			continue
		}
		if all, _ := io.ReadAll(r); string(all) != c.head {
			t.Errorf("replayed %q", all)
		}
		if back, err := ParseKind(c.want); err != nil || back != k {
			t.Errorf("ParseKind(%q) = %v, %v", c.want, back, err)
		}
	}
	for _, head := range []string{"", "a,b,c\n", "query,option1,choice1\n"} {
		if k, _, err := Sniff(strings.NewReader(head)); err == nil {
			t.Errorf("%q detected as %v", head, k)
		}
	}
}

// oddSeeds and rankSeeds are files good and bad for the fuzz targets.
func oddSeeds() map[string][]byte {
	return map[string][]byte{
		"good":           []byte("item1,item2,item3,odd\n1,2,3,2\ncat,dog,wolf,cat\n"),
		"reordered-bom":  []byte("\ufeffodd,Item3,item2,ITEM1,x\n3,1,2,3,y\n"),
		"bad-rows":       []byte("item1,item2,item3,odd\n1,1,2,1\n1,2\n1,2,3,4\n,2,3,2\n"),
		"quotes":         []byte("item1,item2,item3,odd\n\"a,1\",\"b\"\"2\",c,c\n\"open,x,y,z\n"),
		"header-only":    []byte("item1,item2,item3,odd\n"),
		"formula":        []byte("item1,item2,item3,odd\n'=1,2,3,'=1\n"),
		"over-row-limit": []byte("item1,item2,item3,odd\n" + strings.Repeat("1,2,3,1\n", 120)),
	}
}

func rankSeeds() map[string][]byte {
	return map[string][]byte{
		"good-3-2":       []byte("query,option1,option2,option3,choice1,choice2\nq,a,b,c,c,a\n"),
		"good-8-2":       []byte("query,option1,option2,option3,option4,option5,option6,option7,option8,choice1,choice2\n0,1,2,3,4,5,6,7,8,5,2\n"),
		"bad-rows":       []byte("query,option1,option2,option3,choice1,choice2\nq,a,b,c,c,\nq,a,b,c,d,a\nq,a,b,c,a,a\nq,a,a,c,a,c\n"),
		"gap-in-numbers": []byte("query,option1,option3,option2,choice2,choice1\nq,a,b,c,a,b\n"),
		"bad-spec":       []byte("query,option1,choice1\nq,a,a\n"),
		"quotes":         []byte("query,option1,option2,option3,choice1,choice2\n\"q\n\",a,b,c,a,b\n"),
		"over-row-limit": []byte("query,option1,option2,option3,choice1,choice2\n" + strings.Repeat("q,a,b,c,a,b\n", 120)),
	}
}

// FuzzReadOddOneOut: ReadOddOneOut does not panic; it keeps the row limit;
// what it accepts validates, and reads back the same after WriteOddOneOut.
func FuzzReadOddOneOut(f *testing.F) {
	const maxRows = 100
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadOddOneOut(bytes.NewReader(data), ReadOptions{MaxRows: maxRows})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		if len(s.Trials) == 0 || len(s.Trials) > maxRows {
			t.Fatalf("%d trials", len(s.Trials))
		}
		for _, tr := range s.Trials {
			if err := tr.Validate(len(s.IDs)); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := WriteOddOneOut(&buf, s.IDs, s.Trials); err != nil {
			t.Fatal(err)
		}
		back, err := ReadOddOneOut(&buf, ReadOptions{})
		if err != nil {
			t.Fatalf("written set does not read back: %v", err)
		}
		if !slices.Equal(back.IDs, s.IDs) || !slices.Equal(back.Trials, s.Trials) {
			t.Fatalf("round trip changed the set: %q %v, %q %v", s.IDs, s.Trials, back.IDs, back.Trials)
		}
	})
}

// FuzzReadRank: ReadRank does not panic; it keeps the row limit; what it
// accepts validates against its spec, and reads back the same after
// WriteRank.
func FuzzReadRank(f *testing.F) {
	const maxRows = 100
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadRank(bytes.NewReader(data), ReadOptions{MaxRows: maxRows})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		if len(s.Trials) == 0 || len(s.Trials) > maxRows {
			t.Fatalf("%d trials", len(s.Trials))
		}
		for _, tr := range s.Trials {
			if err := tr.Validate(len(s.IDs), s.Spec); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := WriteRank(&buf, s.IDs, s.Spec, s.Trials); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRank(&buf, ReadOptions{})
		if err != nil {
			t.Fatalf("written set does not read back: %v", err)
		}
		if !slices.Equal(back.IDs, s.IDs) || back.Spec != s.Spec || len(back.Trials) != len(s.Trials) {
			t.Fatalf("round trip changed the set")
		}
		for k := range s.Trials {
			a, b := s.Trials[k], back.Trials[k]
			if a.Query != b.Query || !slices.Equal(a.Options, b.Options) || !slices.Equal(a.Choices, b.Choices) {
				t.Fatalf("round trip: trial %d %+v became %+v", k, a, b)
			}
		}
	})
}

// TestFuzzSeedsCommitted keeps testdata/fuzz in step with the seeds
// (-update-corpus rewrites them).
func TestFuzzSeedsCommitted(t *testing.T) {
	t.Parallel()
	fuzzcorpus.Check(t, "FuzzReadOddOneOut", oddSeeds())
	fuzzcorpus.Check(t, "FuzzReadRank", rankSeeds())
}
