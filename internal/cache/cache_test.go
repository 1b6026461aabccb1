package cache

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// The entry past the bound evicts the least recently used one: an entry
// read since it was added stays.
func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	const n = 4
	c := New[int, string](n)
	for i := range n {
		c.Add(i, fmt.Sprint(i))
	}
	if _, ok := c.Get(0); !ok { // 0 is now the most recent; 1 the least
		t.Fatal("entry 0 missing before the cache was full")
	}
	c.Add(n, "new")
	if c.Len() != n {
		t.Fatalf("%d entries, want %d", c.Len(), n)
	}
	if _, ok := c.Peek(1); ok {
		t.Error("the least recently used entry (1) was kept past the bound")
	}
	for _, k := range []int{0, 2, 3, n} {
		if _, ok := c.Peek(k); !ok {
			t.Errorf("entry %d was evicted; only the least recently used should be", k)
		}
	}
}

// Peek does not make an entry recent: the entry peeked at is still the one
// evicted.
func TestLRUPeekDoesNotMarkUsed(t *testing.T) {
	t.Parallel()
	c := New[int, int](2)
	c.Add(1, 1)
	c.Add(2, 2)
	c.Peek(1)
	c.Add(3, 3)
	if _, ok := c.Peek(1); ok {
		t.Error("entry 1 was kept although only peeked at")
	}
}

// The byte budget is never exceeded, whatever the mix of sizes, and an
// entry over the budget is not kept (nor the older value of its key).
func TestLRUNeverExceedsByteBudget(t *testing.T) {
	t.Parallel()
	const budget = 1000
	c := NewSized[int, []byte](0, budget, func(b []byte) int64 { return int64(len(b)) })
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		k := rng.IntN(50)
		v := make([]byte, rng.IntN(budget/3))
		if c.Add(k, v) {
			if got, ok := c.Peek(k); !ok || len(got) != len(v) {
				t.Fatalf("add %d: the value just added is not held", i)
			}
		}
		if b := c.Bytes(); b > budget {
			t.Fatalf("after add %d the cache holds %d bytes, budget %d", i, b, budget)
		}
		if i%100 == 0 {
			c.Remove(rng.IntN(50))
		}
		var sum int64
		c.RemoveFunc(func(_ int, v []byte) bool { sum += int64(len(v)); return false })
		if sum != c.Bytes() {
			t.Fatalf("after add %d the cache counts %d bytes but holds %d", i, c.Bytes(), sum)
		}
	}
	c.Add(7, make([]byte, 10))
	if c.Add(7, make([]byte, budget+1)) {
		t.Fatal("a value over the whole budget was kept")
	}
	if _, ok := c.Peek(7); ok {
		t.Error("the older value of a key stayed after a value over the budget replaced it")
	}
}

// Within the byte budget the oldest entries go first.
func TestLRUByteBudgetEvictsOldest(t *testing.T) {
	t.Parallel()
	c := NewSized[string, int64](0, 10, func(n int64) int64 { return n })
	c.Add("a", 4)
	c.Add("b", 4)
	c.Get("a")
	c.Add("c", 4) // 12 > 10: b, the least recently used, goes
	if _, ok := c.Peek("b"); ok {
		t.Error("b, the least recently used, was kept past the budget")
	}
	if _, ok := c.Peek("a"); !ok {
		t.Error("a, used since b was added, was evicted")
	}
	if c.Bytes() != 8 {
		t.Errorf("%d bytes held, want 8", c.Bytes())
	}
	empty := NewSized[string, int64](0, 0, func(n int64) int64 { return n })
	if empty.Add("x", 1) || empty.Len() != 0 {
		t.Error("a cache of no bytes kept an entry")
	}
}

// A sized cache with an entry bound honours both.
func TestLRUSizedHonoursEntryBound(t *testing.T) {
	t.Parallel()
	c := NewSized[int, int64](3, 1<<20, func(n int64) int64 { return n })
	for i := range 10 {
		c.Add(i, 10)
	}
	if c.Len() != 3 || c.Bytes() != 30 {
		t.Errorf("%d entries of %d bytes, want 3 of 30", c.Len(), c.Bytes())
	}
}

// AddIf keeps a newer value: a stale version does not replace it.
func TestLRUAddIfKeepsNewer(t *testing.T) {
	t.Parallel()
	c := New[string, int](4)
	newer := func(v int) func(int) bool { return func(old int) bool { return old <= v } }
	c.AddIf("s", 5, newer(5))
	if c.AddIf("s", 3, newer(3)) {
		t.Error("version 3 replaced version 5")
	}
	if v, _ := c.Get("s"); v != 5 {
		t.Errorf("version %d held, want 5", v)
	}
	if !c.AddIf("s", 6, newer(6)) {
		t.Error("version 6 did not replace version 5")
	}
}

// GetOrAdd creates a key's value once however many ask at once.
func TestLRUGetOrAddCreatesOnce(t *testing.T) {
	t.Parallel()
	c := New[int, *int](8)
	var mu sync.Mutex
	created := 0
	got := make([]*int, 32)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], _ = c.GetOrAdd(1, func() *int {
				mu.Lock()
				created++
				mu.Unlock()
				return new(int)
			})
		})
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("created %d values, want 1", created)
	}
	for _, p := range got {
		if p != got[0] {
			t.Fatal("callers got different values for one key")
		}
	}
}

// RemoveFunc drops exactly the entries it is told to; Purge drops all.
func TestLRURemoveFuncAndPurge(t *testing.T) {
	t.Parallel()
	c := NewSized[int, int64](0, 100, func(n int64) int64 { return n })
	for i := range 10 {
		c.Add(i, int64(i))
	}
	if n := c.RemoveFunc(func(k int, _ int64) bool { return k%2 == 0 }); n != 5 {
		t.Errorf("removed %d, want 5", n)
	}
	if c.Len() != 5 || c.Bytes() != 1+3+5+7+9 {
		t.Errorf("%d entries of %d bytes left, want 5 of 25", c.Len(), c.Bytes())
	}
	c.Purge()
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("%d entries of %d bytes after Purge", c.Len(), c.Bytes())
	}
}

// BenchmarkLRUGetParallel is the hot path of the identity cache: a hit per
// request from many goroutines.
func BenchmarkLRUGetParallel(b *testing.B) {
	const n = 100_000
	c := New[int, int](n)
	for i := range n {
		c.Add(i, i)
	}
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(1, 2))
		for pb.Next() {
			c.Get(rng.IntN(n))
		}
	})
}
