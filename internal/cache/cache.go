// Package cache is the module's one bounded in-memory cache: a map that
// evicts its least recently used entries past a number of entries and,
// when asked, past a budget of bytes. Every cache a process keeps (a
// study's items, participants' identities, designs' states, rendered
// texts, images, dashboard tallies) is one of these, so that none grows
// without bound and none forgets everything at once when it is full.
//
// The list and its recency come from hashicorp/golang-lru's simplelru; this
// package adds the lock, the byte budget and the few atomic updates the
// callers need (add unless newer, get or create, remove by value).
package cache

import (
	"fmt"
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// LRU is a least-recently-used cache of values by key, safe for concurrent
// use. Get and the adds mark an entry used; Peek does not.
type LRU[K comparable, V any] struct {
	maxBytes int64         // the budget of the sizes held (used only with size)
	size     func(V) int64 // an entry's bytes; nil: entries are bounded in number alone
	mu       sync.Mutex    // guards list and bytes
	list     *simplelru.LRU[K, V]
	bytes    int64 // the sizes of the entries in list added up
}

// New returns a cache of at most maxEntries entries (at least 1).
func New[K comparable, V any](maxEntries int) *LRU[K, V] {
	if maxEntries < 1 {
		panic(fmt.Sprintf("cache.New(%d): a cache holds at least one entry", maxEntries))
	}
	return newLRU[K, V](maxEntries, 0, nil)
}

// NewSized returns a cache whose entries' sizes (size) add up to at most
// maxBytes, and of at most maxEntries entries (0: as many as fit in
// maxBytes). A value larger than maxBytes is not kept; maxBytes 0 or less
// keeps nothing. size must give a value the same size every time (the
// bytes held are counted when it is added and when it leaves).
func NewSized[K comparable, V any](maxEntries int, maxBytes int64, size func(V) int64) *LRU[K, V] {
	if maxEntries < 0 || size == nil {
		panic(fmt.Sprintf("cache.NewSized(%d, %d): want entries ≥ 0 and a size function", maxEntries, maxBytes))
	}
	if maxEntries == 0 {
		maxEntries = math.MaxInt
	}
	return newLRU[K, V](maxEntries, max(maxBytes, 0), size)
}

func newLRU[K comparable, V any](maxEntries int, maxBytes int64, size func(V) int64) *LRU[K, V] {
	c := &LRU[K, V]{maxBytes: maxBytes, size: size}
	var evicted simplelru.EvictCallback[K, V]
	if size != nil {
		// Called under mu by every removal (eviction, Remove, Purge).
		evicted = func(_ K, v V) { c.bytes -= size(v) }
	}
	// NewLRU fails only for a size below 1, ruled out above.
	c.list, _ = simplelru.NewLRU(maxEntries, evicted)
	return c
}

// Get returns the value of key and marks it the most recently used.
func (c *LRU[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list.Get(key)
}

// Peek returns the value of key without marking it used.
func (c *LRU[K, V]) Peek(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list.Peek(key)
}

// Add sets key to value, the most recently used entry, evicting the least
// recently used entries past the bounds. It reports whether value is kept:
// not when it alone is over the byte budget (an older value of key is then
// removed, not served).
func (c *LRU[K, V]) Add(key K, value V) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.add(key, value)
}

// AddIf sets key to value, as Add, when key is absent or replace(old)
// says so: for instance when old is of an earlier version than value.
func (c *LRU[K, V]) AddIf(key K, value V, replace func(old V) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.list.Peek(key); ok && !replace(old) {
		return false
	}
	return c.add(key, value)
}

// GetOrAdd returns the value of key, marking it used; when key is absent it
// adds create() and returns that, with added true. create runs under the
// cache's lock: it must be quick and must not use the cache.
func (c *LRU[K, V]) GetOrAdd(key K, create func() V) (v V, added bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.list.Get(key); ok {
		return v, false
	}
	v = create()
	c.add(key, v)
	return v, true
}

// add is Add with mu held.
func (c *LRU[K, V]) add(key K, value V) bool {
	if c.size == nil {
		c.list.Add(key, value)
		return true
	}
	n := c.size(value)
	if n > c.maxBytes {
		c.list.Remove(key)
		return false
	}
	if old, ok := c.list.Peek(key); ok {
		c.bytes -= c.size(old) // simplelru replaces a value without the eviction callback
	}
	c.bytes += n
	c.list.Add(key, value) // may evict the oldest entry past maxEntries
	for c.bytes > c.maxBytes {
		c.list.RemoveOldest() // never key itself: it alone fits
	}
	return true
}

// Remove drops key and reports whether it was held.
func (c *LRU[K, V]) Remove(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list.Remove(key)
}

// RemoveFunc drops every entry for which drop is true and returns how many
// it dropped. It visits every entry under the cache's lock.
func (c *LRU[K, V]) RemoveFunc(drop func(K, V) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.list.Keys() {
		if v, _ := c.list.Peek(k); drop(k, v) {
			c.list.Remove(k)
			n++
		}
	}
	return n
}

// Purge drops every entry.
func (c *LRU[K, V]) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list.Purge()
}

// Len returns the number of entries held.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list.Len()
}

// Bytes returns the sizes of the entries held added up (0 for a cache
// without a byte budget).
func (c *LRU[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
