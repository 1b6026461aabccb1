package dashboard

import (
	"context"
	"sync"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/study"
)

// TallyCache keeps per study the additive tally of its answers (Tally) up
// to a watermark, brought up to date on each use by reading only the
// answers after it, so a load of a large study's dashboard does not count
// every answer again. The tally is counted again from scratch when the
// study's participants change (added, excluded, included:
// study.DashboardVersion's Structure) or when the answers below the
// watermark are not the ones counted. Each replica has its own; the
// watermark and the checks are read from PostgreSQL, so no replica serves
// stale figures.
type TallyCache struct {
	store TallySource
	top   int // the contradicted comparisons a tally keeps (NewTally)

	tallies *cache.LRU[int64, *tallyEntry] // by study id
}

// TallySource is what the cache reads a study's answers from (the store).
type TallySource interface {
	// DashboardCounts counts a study's answers from scratch, with the top
	// most contradicted comparisons.
	DashboardCounts(ctx context.Context, studyID int64, top int) (study.DashboardCounts, error)
	// DashboardAnswersAfter returns the answers after the watermark seq.
	DashboardAnswersAfter(ctx context.Context, studyID, seq int64) (study.DashboardDelta, error)
}

// tallyEntry is a study's tally. An entry evicted while in use is
// harmless: its holder keeps the pointer, and the next use counts afresh.
type tallyEntry struct {
	mu        sync.Mutex // guards structure and tally: serialises the study's updates and readers
	structure string
	tally     *Tally
}

// cachedTallies bounds the studies kept, the least recently used going
// first (a 100,000-answer study's tally is a few MB).
const cachedTallies = 64

// NewTallyCache returns an empty cache of tallies read from store, each
// keeping the top most contradicted comparisons.
func NewTallyCache(store TallySource, top int) *TallyCache {
	return &TallyCache{store: store, top: top, tallies: cache.New[int64, *tallyEntry](cachedTallies)}
}

// With calls fn with the study's tally, current as of this call: advanced
// past the answers added since the last call, or counted from scratch when
// there is none yet, when structure (the participants' fingerprint,
// study.DashboardVersion's Structure) changed or when the advance finds
// the counted answers changed. fn must not keep t.
func (c *TallyCache) With(ctx context.Context, studyID int64, structure string, fn func(t *Tally) error) error {
	e, _ := c.tallies.GetOrAdd(studyID, func() *tallyEntry { return &tallyEntry{} })
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := e.tally == nil || e.structure != structure
	if !fresh {
		d, err := c.store.DashboardAnswersAfter(ctx, studyID, e.tally.Seq)
		if err != nil {
			return err
		}
		fresh = !e.tally.Advance(d)
	}
	if fresh {
		e.tally = nil
		counts, err := c.store.DashboardCounts(ctx, studyID, c.top)
		if err != nil {
			return err
		}
		e.tally, e.structure = NewTally(counts, c.top), structure
	}
	return fn(e.tally)
}

// Stats returns the study's counts, current as of this call (see With).
func (c *TallyCache) Stats(ctx context.Context, studyID int64, structure string) (study.Stats, error) {
	var st study.Stats
	err := c.With(ctx, studyID, structure, func(t *Tally) error {
		st = t.Stats()
		return nil
	})
	return st, err
}
