package study

import (
	"slices"
	"testing"
)

func TestTripletShape(t *testing.T) {
	t.Parallel()
	a, l, r := ItemRef{Index: 4}, ItemRef{Index: 9}, ItemRef{Index: 2}
	q := NewTriplet(a, l, r)
	if q.Format != FormatTriplet {
		t.Errorf("format %q, want %q", q.Format, FormatTriplet)
	}
	if got := q.Items(); !slices.Equal(got, []ItemRef{a, l, r}) {
		t.Errorf("Items() = %v, want anchor, left, right", got)
	}
	for i, want := range map[int]bool{9: true, 2: true, 4: false, 7: false} {
		if q.Offers(i) != want {
			t.Errorf("Offers(%d) = %v, want %v (the anchor is not an option)", i, !want, want)
		}
	}
	// Items must not alias the options: a caller appending to it leaves q alone.
	_ = append(q.Items()[:1], ItemRef{Index: 99})
	if q.Options[0].Index != 9 {
		t.Errorf("Items aliased the options: %v", q.Options)
	}
}
