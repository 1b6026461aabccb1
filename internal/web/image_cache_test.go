package web

import (
	"fmt"
	"testing"
)

// imageOf is a made-up cached image of size bytes called name.
func imageOf(name string, size int) *cachedImage {
	return &cachedImage{sum: name, contentType: "image/png", ext: ".png", data: make([]byte, size)}
}

// The images held never add up to more than the budget, and the image
// past it evicts the least recently served ones, not all of them.
func TestImageCacheStaysWithinBudget(t *testing.T) {
	t.Parallel()
	const budget = 1000
	c := newImageCache(budget)
	for i := range 4 {
		c.put(imageOf(fmt.Sprint(i), 250)) // exactly the budget
	}
	if _, ok := c.get("0"); !ok { // served again: now the most recent
		t.Fatal("image 0 missing while the cache was within its budget")
	}
	c.put(imageOf("big", 400)) // 1400 bytes: images 1 and 2 must go
	for name, want := range map[string]bool{"0": true, "1": false, "2": false, "3": true, "big": true} {
		if _, ok := c.get(name); ok != want {
			t.Errorf("image %s held %v, want %v", name, ok, want)
		}
	}
	for i := range 100 {
		c.put(imageOf(fmt.Sprint("more", i), 1+i*7%250))
		if b := c.held.Bytes(); b > budget {
			t.Fatalf("after image %d the cache holds %d bytes, budget %d", i, b, budget)
		}
	}
	none := newImageCache(0)
	none.put(imageOf("x", 1))
	if _, ok := none.get("x"); ok || none.fits(1) {
		t.Error("a cache of no bytes holds an image")
	}
}
