package triplet

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Points on a line at 0, 1, 3, 4, 4 (rows 0..4): the neighbours of each row
// worked out by hand, ties broken towards the lower index.
func TestNearest(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(5, 1, []float64{0, 1, 3, 4, 4})
	cases := []struct {
		i, k int
		want []int
	}{
		{0, 2, []int{1, 2}},
		{2, 2, []int{3, 4}},    // 3 and 4 are both 1 away; 1 is 2 away
		{2, 3, []int{3, 4, 1}}, // then 1 (2 away) before 0 (3 away)
		{3, 1, []int{4}},       // 4 is 0 away
		{4, 2, []int{3, 2}},
		{1, 10, []int{0, 2, 3, 4}}, // k capped at n − 1; 0 and 2 are 1 and 2 away
		{1, 0, []int{}},
	}
	for _, c := range cases {
		got := Nearest(nil, x, c.i, c.k)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("Nearest(row %d, k %d) = %v, want %v", c.i, c.k, got, c.want)
		}
	}
	// Equal distances: the lower index first.
	tie := mat.NewDense(3, 1, []float64{0, -1, 1})
	if got := Nearest(nil, tie, 0, 2); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("tie: %v", got)
	}
}
