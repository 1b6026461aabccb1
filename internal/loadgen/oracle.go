package loadgen

import (
	"fmt"
	"io"
	"strconv"

	"github.com/closer-lab/closer/internal/triplet"
)

// Item is an item as the API shows it in a question.
type Item struct {
	Index int    `json:"index"`
	Label string `json:"label"`
}

// Oracle answers questions from known coordinates: the option nearer to
// the anchor (Euclidean distance) is the closer one.
type Oracle struct {
	points map[string][]float64
}

// ReadOracle reads coordinates as CSV with a header item,x1,...,xD. An
// item is named by its label (as the study shows it, e.g. disk-07) or by
// its index 0..n-1 (as in triplets.csv); a question's item is looked up by
// label first, then by index.
func ReadOracle(r io.Reader) (*Oracle, error) {
	ids, x, err := triplet.ReadPoints(r)
	if err != nil {
		return nil, err
	}
	_, d := x.Dims()
	o := &Oracle{points: make(map[string][]float64, len(ids))}
	for i, id := range ids {
		if _, dup := o.points[id]; dup {
			return nil, fmt.Errorf("item %q appears twice", id)
		}
		o.points[id] = x.RawRowView(i)[:d:d]
	}
	return o, nil
}

func (o *Oracle) point(it Item) ([]float64, error) {
	if p, ok := o.points[it.Label]; ok {
		return p, nil
	}
	if p, ok := o.points[strconv.Itoa(it.Index)]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("the coordinates file has no item %q (index %d)", it.Label, it.Index)
}

// Closer returns the index of the option nearer to the anchor (left on a
// tie).
func (o *Oracle) Closer(anchor, left, right Item) (int, error) {
	var p [3][]float64
	for i, it := range []Item{anchor, left, right} {
		var err error
		if p[i], err = o.point(it); err != nil {
			return 0, err
		}
	}
	if sqDist(p[0], p[2]) < sqDist(p[0], p[1]) {
		return right.Index, nil
	}
	return left.Index, nil
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
