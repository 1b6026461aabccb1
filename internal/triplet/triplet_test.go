package triplet

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestVotesCountsAndContradictions(t *testing.T) {
	t.Parallel()
	v := VotesOf([]Triplet{
		{0, 1, 2}, {0, 1, 2}, {0, 2, 1}, // contradicted key (0;1,2): 2 vs 1
		{3, 5, 4}, // one answer, stored under j=4 < k=5
		{1, 0, 2},
	})
	if got := v.Count(0, 1, 2); got != 2 {
		t.Errorf("#(0,1,2) = %d, want 2", got)
	}
	if got := v.Count(0, 2, 1); got != 1 {
		t.Errorf("#(0,2,1) = %d, want 1", got)
	}
	if got := v.Count(3, 5, 4); got != 1 {
		t.Errorf("#(3,5,4) = %d, want 1", got)
	}
	if got := v.Count(3, 4, 5); got != 0 {
		t.Errorf("#(3,4,5) = %d, want 0", got)
	}
	if v.Len() != 3 {
		t.Errorf("Len = %d, want 3", v.Len())
	}
	c := v.Contradictions()
	if len(c) != 1 || c[0] != (Key{0, 1, 2}) {
		t.Errorf("contradictions %v", c)
	}
	maj := v.Majority()
	want := []Triplet{{0, 1, 2}, {1, 0, 2}, {3, 5, 4}}
	if len(maj) != len(want) {
		t.Fatalf("majority %v, want %v", maj, want)
	}
	for i := range want {
		if maj[i] != want[i] {
			t.Errorf("majority %v, want %v", maj, want)
		}
	}
}

func TestReadCSVIntegerAndStringIDs(t *testing.T) {
	t.Parallel()
	s, err := ReadCSV(strings.NewReader("anchor,closer,farther,extra\n10,2,7,x\n2,10,7,y\n"))
	if err != nil {
		t.Fatal(err)
	}
	// integer ids are indexed in numeric order: 2, 7, 10
	if strings.Join(s.IDs, ",") != "2,7,10" {
		t.Errorf("ids %v", s.IDs)
	}
	if s.Triplets[0] != (Triplet{2, 0, 1}) || s.Triplets[1] != (Triplet{0, 2, 1}) {
		t.Errorf("triplets %v", s.Triplets)
	}

	s, err = ReadCSV(strings.NewReader("\ufeffLoser,Head,Winner\ncat,dog,wolf\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.IDs, ",") != "cat,dog,wolf" || s.Triplets[0] != (Triplet{1, 2, 0}) {
		t.Errorf("synonym header: ids %v triplets %v", s.IDs, s.Triplets)
	}
}

func TestReadCSVBadRows(t *testing.T) {
	t.Parallel()
	in := "anchor,closer,farther\n1,2,3\n1,1,3\n4,5\n,2,3\n7,8,9\n"
	_, err := ReadCSV(strings.NewReader(in))
	var ce *CSVError
	if !errors.As(err, &ce) {
		t.Fatalf("want *CSVError, got %v", err)
	}
	want := []RowError{{3, "repeated item"}, {4, "2 field(s)"}, {5, "empty item id"}}
	if ce.Total != len(want) || len(ce.Rows) != len(want) {
		t.Fatalf("got %v", ce)
	}
	for i, w := range want {
		if ce.Rows[i].Line != w.Line || !strings.HasPrefix(ce.Rows[i].Reason, w.Reason) {
			t.Errorf("row error %d: %v, want line %d %q...", i, ce.Rows[i], w.Line, w.Reason)
		}
	}
	for _, bad := range []string{"", "a,b,c\n1,2,3\n", "anchor,closer,farther\n"} {
		if _, err := ReadCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rng := NewRand(1)
	o := NewOracle(Gaussian(rng, 20, 3, 1), 0.2, 7)
	ts := RandomTriplets(rng, o, 500)
	var buf bytes.Buffer
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = string(rune('a'+i)) + "x"
	}
	if err := WriteCSV(&buf, ids, ts); err != nil {
		t.Fatal(err)
	}
	s, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range ts {
		got := s.Triplets[i]
		if s.IDs[got.Anchor] != ids[tr.Anchor] || s.IDs[got.Closer] != ids[tr.Closer] || s.IDs[got.Farther] != ids[tr.Farther] {
			t.Fatalf("row %d: %v became %v", i, tr, got)
		}
	}
}

func TestStrangeFruitFile(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../../shared/data/strange-fruit-triplets.csv")
	if err != nil {
		t.Skipf("shared data not beside the checkout: %v", err)
	}
	defer f.Close()
	s, err := ReadCSVWith(f, ReadOptions{GroupBy: "sampler"})
	if err != nil {
		t.Fatal(err)
	}
	// Figures from ../shared/data/README.md: 20,086 answers on 30 items 0..29.
	if len(s.Triplets) != 20086 || s.N() != 30 || s.IDs[0] != "0" || s.IDs[29] != "29" {
		t.Fatalf("%d triplets over %d items (%s..%s)", len(s.Triplets), s.N(), s.IDs[0], s.IDs[s.N()-1])
	}
	groups := map[string]int{}
	for _, g := range s.Groups {
		groups[g]++
	}
	for _, g := range []string{"RandomSampling", "UncertaintySampling", "STE", "CrowdKernel", "Test"} {
		if groups[g] == 0 {
			t.Errorf("no rows from sampler %s", g)
		}
	}
	if len(VotesOf(s.Triplets).Contradictions()) == 0 {
		t.Error("the file is known to contain contradictions; none found")
	}
}

func TestOracleNoiseRate(t *testing.T) {
	t.Parallel()
	rng := NewRand(3)
	x := UniformCube(rng, 50, 2)
	o := NewOracle(x, 0.3, 9)
	wrong := 0
	const m = 20000
	for range m {
		a, i, j := RandomQuestion(rng, 50)
		if o.Answer(a, i, j) != Truth(x, a, i, j) {
			wrong++
		}
	}
	// Binomial(20000, 0.3): standard deviation 0.0032; allow 5 of them.
	if rate := float64(wrong) / m; math.Abs(rate-0.3) > 0.016 {
		t.Errorf("error rate %.4f, want 0.3", rate)
	}
}

func TestGenerators(t *testing.T) {
	t.Parallel()
	rng := NewRand(5)
	for _, d := range []int{1, 2, 5} {
		for i, row := 0, Sphere(rng, 100, d); i < 100; i++ {
			var s float64
			for _, v := range row.RawRowView(i) {
				s += v * v
			}
			if math.Abs(s-1) > 1e-9 {
				t.Fatalf("sphere d=%d: |x|² = %v", d, s)
			}
		}
		for i, b := 0, Ball(rng, 100, d); i < 100; i++ {
			var s float64
			for _, v := range b.RawRowView(i) {
				s += v * v
			}
			if s > 1+1e-12 {
				t.Fatalf("ball d=%d: |x|² = %v", d, s)
			}
		}
	}
	x, labels := GaussianMixture(rng, 300, 10, 3, 10)
	// Well separated: every point is nearer its own centre's points on average.
	for c := range 3 {
		n := 0
		for _, l := range labels {
			if l == c {
				n++
			}
		}
		if n != 100 {
			t.Errorf("cluster %d has %d points", c, n)
		}
	}
	if SqDist(x, 0, 3) > SqDist(x, 0, 1) { // 0 and 3 share cluster 0; 1 is in cluster 1
		t.Errorf("mixture not separated: d(0,3)=%v d(0,1)=%v", SqDist(x, 0, 3), SqDist(x, 0, 1))
	}
}

func TestSplitAndAll(t *testing.T) {
	t.Parallel()
	x := Gaussian(NewRand(1), 10, 2, 1)
	all := AllTriplets(x)
	if len(all) != 10*9*8/2 {
		t.Fatalf("%d triplets", len(all))
	}
	train, test := Split(all, 0.25, 4)
	if len(test) != 90 || len(train) != 270 {
		t.Fatalf("split %d/%d", len(train), len(test))
	}
	train2, test2 := Split(all, 0.25, 4)
	for i := range test {
		if test[i] != test2[i] {
			t.Fatal("split not deterministic")
		}
	}
	_ = train2
	seen := map[Triplet]int{}
	for _, tr := range append(append([]Triplet{}, train...), test...) {
		seen[tr]++
	}
	if len(seen) != len(all) {
		t.Fatal("split lost or duplicated triplets")
	}
}
