package web

import (
	"sync"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/recompute"
)

// dashCache keeps what the dashboard would otherwise recompute on every
// load of a large study: the decoded results of a run and the plots drawn
// from them (a finished run never changes), and the studies' tallies of
// their answers (dashboard.TallyCache). Each replica has its own.
type dashCache struct {
	results *cache.LRU[int64, *runEntry] // by run id
	tallies *dashboard.TallyCache

	mu sync.Mutex // guards every runEntry's plots
}

// runEntry is a decoded run result and its plots (SVG), by item count.
type runEntry struct {
	res   *recompute.Result
	plots map[string]string
}

const cachedRuns = 8 // decoded results kept, the least recently used going first

func newDashCache(store *collect.Store) *dashCache {
	return &dashCache{results: cache.New[int64, *runEntry](cachedRuns), tallies: dashboard.NewTallyCache(store, dashboardTopContra)}
}

// run returns the decoded result of the run, decoding blob on a miss.
func (c *dashCache) run(runID int64, load func() ([]byte, error)) (*runEntry, error) {
	if e, ok := c.results.Get(runID); ok {
		return e, nil
	}
	blob, err := load()
	if err != nil {
		return nil, err
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		return nil, err
	}
	// Two loads decoding the same run at once keep the first's entry, so
	// the plots drawn for it are not lost.
	e, _ := c.results.GetOrAdd(runID, func() *runEntry { return &runEntry{res: res, plots: map[string]string{}} })
	return e, nil
}

// plot returns the run's plot called name, drawing it on a miss.
func (c *dashCache) plot(e *runEntry, name string, draw func() string) string {
	c.mu.Lock()
	svg, ok := e.plots[name]
	c.mu.Unlock()
	if ok {
		return svg
	}
	svg = draw()
	c.mu.Lock()
	e.plots[name] = svg
	c.mu.Unlock()
	return svg
}
