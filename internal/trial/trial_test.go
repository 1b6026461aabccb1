package trial

import (
	"errors"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

func tri(a, c, f int) triplet.Triplet { return triplet.Triplet{Anchor: a, Closer: c, Farther: f} }

// TestOddTripletsMatchCblearn: the expected rows are those of cblearn's
// triplets_from_oddoneout (cblearn/preprocessing/_query.py) worked by hand
// on X = [[0, 1, 2], [5, 6, 7]], y = [0, 2]: far = X[mask] = [0, 7],
// others = [[1, 2], [5, 6]], and for each ordered pair of the others
// (permutations((0, 1), 2) = (0, 1), (1, 0)) the rows [others[:, pair],
// far]: [1 2 0], [5 6 7], then [2 1 0], [6 5 7]. cblearn stacks by pair,
// closer by trial; the triplets per trial are the same, (n_choices − 1)
// (n_choices − 2) = 2 each, and its (anchor, near, far) columns are
// closer's (Anchor, Closer, Farther).
func TestOddTripletsMatchCblearn(t *testing.T) {
	t.Parallel()
	trials := []OddOneOut{{Items: [3]int{0, 1, 2}, Odd: 0}, {Items: [3]int{5, 6, 7}, Odd: 7}}
	got := OddTriplets(trials)
	want := []triplet.Triplet{tri(1, 2, 0), tri(2, 1, 0), tri(5, 6, 7), tri(6, 5, 7)}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// The middle item odd: the pair is the outer two, in display order.
	if got := (OddOneOut{Items: [3]int{3, 4, 5}, Odd: 4}).Triplets(nil); !slices.Equal(got, []triplet.Triplet{tri(3, 5, 4), tri(5, 3, 4)}) {
		t.Fatalf("middle odd: %v", got)
	}
}

// TestRankTripletsMatchCblearn: the expected rows are cblearn's
// triplets_from_multiselect(X, selected, is_ranked=True) on the data of
// its own test (cblearn/preprocessing/tests/test_query.py,
// test_triplets_from_multiselect): X = [[0..6], [10..16]] (the query
// first, six references), selected columns [[2, 1], [1, 2]]. Worked by hand
// from _query.py: the rows are reordered to query, choices, the others
// ([0, 2, 1, 3, 4, 5, 6] and [10, 11, 12, 13, 14, 15, 16]), then the
// column triples [0, s, o] for s = 1..2, o = s+1..6: 5 + 4 = 9 triplets a
// trial, the count the test asserts (len(multi_data) * (5 + 4)).
func TestRankTripletsMatchCblearn(t *testing.T) {
	t.Parallel()
	trials := []Rank{
		{Query: 0, Options: []int{1, 2, 3, 4, 5, 6}, Choices: []int{2, 1}},
		{Query: 10, Options: []int{11, 12, 13, 14, 15, 16}, Choices: []int{11, 12}},
	}
	want := []triplet.Triplet{
		tri(0, 2, 1), tri(0, 2, 3), tri(0, 2, 4), tri(0, 2, 5), tri(0, 2, 6),
		tri(0, 1, 3), tri(0, 1, 4), tri(0, 1, 5), tri(0, 1, 6),
		tri(10, 11, 12), tri(10, 11, 13), tri(10, 11, 14), tri(10, 11, 15), tri(10, 11, 16),
		tri(10, 12, 13), tri(10, 12, 14), tri(10, 12, 15), tri(10, 12, 16),
	}
	if got := RankTriplets(trials); !slices.Equal(got, want) {
		t.Fatalf("got %v,\nwant %v", got, want)
	}
	for _, c := range []struct{ n, k, want int }{{6, 2, 9}, {8, 2, 13}, {3, 2, 3}, {9, 8, 36}} {
		if got := DerivedPerRank(RankSpec{N: c.n, K: c.k}); got != c.want {
			t.Errorf("DerivedPerRank(%d, %d) = %d, want %d", c.n, c.k, got, c.want)
		}
	}
}

func TestCheckAnswers(t *testing.T) {
	t.Parallel()
	items := [3]int{4, 7, 9}
	if tr, err := CheckOddOneOut(items, []int{7}); err != nil || tr.Odd != 7 {
		t.Fatalf("good odd-one-out answer: %v, %v", tr, err)
	}
	kind := func(err error) string {
		var ae *AnswerError
		if !errors.As(err, &ae) || ae.Reason == "" {
			return "?"
		}
		return ae.Kind
	}
	for _, c := range []struct {
		choices []int
		want    string
	}{{nil, TooFew}, {[]int{4, 7}, TooMany}, {[]int{5}, NotShown}} {
		if _, err := CheckOddOneOut(items, c.choices); kind(err) != c.want {
			t.Errorf("odd-one-out %v: %v, want %s", c.choices, err, c.want)
		}
	}
	opts := []int{1, 2, 3, 4, 5, 6, 7, 8}
	if _, err := RankAnswer(0, opts, 2, []int{8, 3}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		choices []int
		want    string
	}{{[]int{3}, TooFew}, {[]int{3, 4, 5}, TooMany}, {[]int{3, 9}, NotShown}, {[]int{0, 3}, NotShown}, {[]int{3, 3}, Repeated}} {
		if _, err := RankAnswer(0, opts, 2, c.choices); kind(err) != c.want {
			t.Errorf("rank %v: %v, want %s", c.choices, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := (OddOneOut{Items: [3]int{0, 1, 2}, Odd: 1}).Validate(3); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []OddOneOut{{[3]int{0, 0, 2}, 0}, {[3]int{0, 1, 3}, 0}, {[3]int{0, 1, 2}, 5}} {
		if err := tr.Validate(3); err == nil {
			t.Errorf("%v accepted", tr)
		}
	}
	spec := RankSpec{N: 3, K: 2}
	good := Rank{Query: 0, Options: []int{1, 2, 3}, Choices: []int{3, 1}}
	if err := good.Validate(4, spec); err != nil {
		t.Fatal(err)
	}
	if got := good.Ordered(nil); !slices.Equal(got, []int{3, 1, 2}) {
		t.Fatalf("Ordered %v", got)
	}
	for _, tr := range []Rank{
		{Query: 0, Options: []int{1, 2}, Choices: []int{1, 2}},       // wrong N
		{Query: 1, Options: []int{1, 2, 3}, Choices: []int{2, 3}},    // query shown as option
		{Query: 0, Options: []int{1, 1, 3}, Choices: []int{1, 3}},    // option twice
		{Query: 0, Options: []int{1, 2, 4}, Choices: []int{1, 2}},    // out of range
		{Query: 0, Options: []int{1, 2, 3}, Choices: []int{1, 1}},    // repeated choice
		{Query: 0, Options: []int{1, 2, 3}, Choices: []int{1}},       // too few
		{Query: 0, Options: []int{1, 2, 3}, Choices: []int{1, 2, 3}}, // too many
	} {
		if err := tr.Validate(4, spec); err == nil {
			t.Errorf("%v accepted", tr)
		}
	}
}

func TestCatchTrials(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		items  [3]int
		choice int
		pass   bool
	}{{[3]int{4, 4, 9}, 9, true}, {[3]int{4, 4, 9}, 4, false}, {[3]int{9, 4, 4}, 9, true}, {[3]int{4, 9, 4}, 9, true}} {
		if pass, err := CatchOddOneOut(c.items, c.choice); err != nil || pass != c.pass {
			t.Errorf("CatchOddOneOut(%v, %d) = %v, %v; want %v", c.items, c.choice, pass, err, c.pass)
		}
	}
	for _, items := range [][3]int{{1, 2, 3}, {4, 4, 4}} {
		if _, err := CatchOddOneOut(items, 1); err == nil {
			t.Errorf("%v judged as a catch trial", items)
		}
	}
	if _, err := CatchOddOneOut([3]int{4, 4, 9}, 5); err == nil {
		t.Error("a choice not shown judged")
	}
	opts := []int{3, 0, 5, 6}
	if pass, err := CatchRank(0, opts, 2, []int{0, 5}); err != nil || !pass {
		t.Errorf("query first: %v, %v", pass, err)
	}
	if pass, err := CatchRank(0, opts, 2, []int{5, 0}); err != nil || pass {
		t.Errorf("query second: %v, %v", pass, err)
	}
	if _, err := CatchRank(1, opts, 2, []int{5, 0}); err == nil {
		t.Error("a trial without the query among the references judged")
	}
	if _, err := CatchRank(0, opts, 2, []int{0, 0}); err == nil {
		t.Error("a repeated choice judged")
	}
}
