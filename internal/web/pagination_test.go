package web

import (
	"math"
	"net/url"
	"strconv"
	"testing"
)

func TestRequestedPage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", 1}, {"people=3", 3}, {"people=1", 1}, {"people=0", 1}, {"people=-4", 1}, {"people=x", 1},
		{"people=2.5", 1}, {"items=7", 1},
		// Past the last page (pageBounds shows nothing), also out of range
		// of int: strconv.Atoi then returns the largest int.
		{"people=" + strconv.Itoa(math.MaxInt), math.MaxInt}, {"people=99999999999999999999", math.MaxInt},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := requestedPage(q, "people"); got != c.want {
				t.Errorf("requestedPage(%q) = %d, want %d", c.query, got, c.want)
			}
		})
	}
}

func TestPageBounds(t *testing.T) {
	t.Parallel()
	// By hand: 45 entries, 20 per page, are pages of 20, 20 and 5.
	for _, c := range []struct {
		name                 string
		page, size, total    int
		wantLo, wantHi, nPgs int
	}{
		{"first", 1, 20, 45, 0, 20, 3},
		{"middle", 2, 20, 45, 20, 40, 3},
		{"last, partial", 3, 20, 45, 40, 45, 3},
		{"past the last", 4, 20, 45, 45, 45, 3},
		{"far past the last", math.MaxInt, 20, 45, 45, 45, 3},
		{"below the first", 0, 20, 45, 45, 45, 3},
		{"last, full", 2, 20, 40, 20, 40, 2},
		{"one page", 1, 50, 7, 0, 7, 1},
		{"empty", 1, 50, 0, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lo, hi := pageBounds(c.page, c.size, c.total)
			if lo != c.wantLo || hi != c.wantHi {
				t.Errorf("pageBounds(%d, %d, %d) = [%d, %d), want [%d, %d)", c.page, c.size, c.total, lo, hi, c.wantLo, c.wantHi)
			}
			if n := pageCount(c.total, c.size); n != c.nPgs {
				t.Errorf("pageCount(%d, %d) = %d, want %d", c.total, c.size, n, c.nPgs)
			}
		})
	}
}
