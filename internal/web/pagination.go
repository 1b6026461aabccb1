package web

import (
	"net/url"
	"strconv"
)

// The dashboard shows its long lists a page at a time: a page number in a
// query parameter, numbered from 1.

// requestedPage is the page number the query parameter name asks for: 1
// when it is absent, not a number or below 1. It may be past the last page.
func requestedPage(q url.Values, name string) int {
	n, _ := strconv.Atoi(q.Get(name))
	return max(1, n)
}

// pageCount is the number of pages of size entries that total entries fill
// (0 for none).
func pageCount(total, size int) int {
	return (total + size - 1) / size
}

// pageBounds returns the entries [lo, hi) of page (from 1) of total
// entries shown size per page: none past the last page.
func pageBounds(page, size, total int) (lo, hi int) {
	if page < 1 || page-1 >= pageCount(total, size) {
		return total, total
	}
	lo = (page - 1) * size
	return lo, min(lo+size, total)
}
