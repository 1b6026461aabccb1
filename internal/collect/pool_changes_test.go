package collect

import (
	"maps"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestCountedPoolChanges: for a landmark design whose comparisons all fit
// in the pool window, the writer's incremental pool changes (only the rows
// of the answered and released comparisons) leave the same pool as the
// walk over the whole window, pass after pass, with answers to
// comparisons outside the design, answers beyond repeats and released
// leases of comparisons no longer wanted mixed in.
func TestCountedPoolChanges(t *testing.T) {
	t.Parallel()
	for _, variant := range []landmark.Variant{landmark.K1, landmark.K2} {
		ds, err := NewDesignScheduler(study.DesignLandmarkK1)
		if err != nil {
			t.Fatal(err)
		}
		const n = 9
		d, err := landmark.New(n, landmark.Config{Variant: variant, NumLandmarks: 3, Repeats: 3, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		full := &cachedState{d: d, pool: map[triplet.Key]poolRow{}}
		counted := &cachedState{pool: map[triplet.Key]poolRow{}}
		apply := func(e *cachedState, write []poolWrite, drop []triplet.Key, taken map[triplet.Key]int32) {
			for _, w := range write {
				e.pool[w.key] = poolRow{wanted: w.wanted, ord: w.ord}
			}
			for _, k := range drop {
				if e.pool[k].wanted == 0 && taken[k] == 0 { // poolDropSQL's condition
					delete(e.pool, k)
				}
			}
		}
		write, drop := ds.poolChanges(full, nil)
		apply(full, write, drop, nil)
		counted.pool = maps.Clone(full.pool)
		counted.nextOrd = full.nextOrd

		rng := triplet.NewRand(7)
		taken := map[triplet.Key]int32{} // leases out per comparison
		for pass := range 15 {
			var entries []inboxEntry
			released := map[triplet.Key]int32{}
			for range 1 + rng.IntN(6) {
				// Mostly the design's comparisons (some beyond their
				// repeats once answered), sometimes any triplet.
				a, b, c := rng.IntN(n), rng.IntN(n), rng.IntN(n)
				if keys := slices.SortedFunc(maps.Keys(full.pool), keyOrder); len(keys) > 0 && rng.IntN(5) > 0 {
					k := keys[rng.IntN(len(keys))]
					a, b, c = k.Anchor, k.J, k.K
				}
				if a == b || a == c || b == c {
					continue
				}
				tr := triplet.Triplet{Anchor: a, Closer: b, Farther: c}
				k := triplet.KeyOf(tr)
				entries = append(entries, inboxEntry{t: tr})
				if taken[k] > 0 {
					taken[k]--
					released[k]++
				}
				d.Record(tr)
			}
			// Some questions go out on lease between passes.
			for k := range full.pool {
				if rng.IntN(3) == 0 {
					taken[k]++
				}
			}
			fw, fd := ds.poolChanges(full, released)
			cw, cd := countedPoolChanges(d, counted, entries, released)
			apply(full, fw, fd, taken)
			apply(counted, cw, cd, taken)
			if !maps.Equal(full.pool, counted.pool) {
				t.Fatalf("%v, pass %d: pools differ:\nwalk    %v\ncounted %v", variant, pass, full.pool, counted.pool)
			}
			written := func(ws []poolWrite) []triplet.Key {
				ks := make([]triplet.Key, len(ws))
				for i, w := range ws {
					ks[i] = w.key
				}
				slices.SortFunc(ks, keyOrder)
				return ks
			}
			if fk, ck := written(fw), written(cw); !slices.Equal(fk, ck) {
				t.Fatalf("%v, pass %d: rows written differ: walk %v, counted %v", variant, pass, fk, ck)
			}
		}
		if p := d.Progress(); p.Covered == 0 || p.Answered == p.Needed {
			t.Fatalf("%v: the answers covered no comparison or all of them (%+v): the test ran no interesting case", variant, p)
		}
	}
}

func keyOrder(a, b triplet.Key) int {
	if a.Anchor != b.Anchor {
		return a.Anchor - b.Anchor
	}
	if a.J != b.J {
		return a.J - b.J
	}
	return a.K - b.K
}
