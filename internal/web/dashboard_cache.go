package web

import (
	"sync"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/recompute"
)

// dashCache keeps what the dashboard would otherwise recompute on every
// load of a large study: the decoded results of a run and the plots drawn
// from them (a finished run never changes), and the studies' tallies of
// their answers (dashboard.TallyCache). Each replica has its own.
type dashCache struct {
	mu      sync.Mutex
	results map[int64]*runEntry // by run id
	order   []int64             // results, oldest first
	tallies *dashboard.TallyCache
}

// runEntry is a decoded run result and its plots (SVG), by item count.
type runEntry struct {
	res   *recompute.Result
	plots map[string]string
}

const cachedRuns = 8 // decoded results kept

func newDashCache(store *collect.Store) *dashCache {
	return &dashCache{results: map[int64]*runEntry{}, tallies: dashboard.NewTallyCache(store, dashboardTopContra)}
}

// run returns the decoded result of the run, decoding blob on a miss.
func (c *dashCache) run(runID int64, load func() ([]byte, error)) (*runEntry, error) {
	c.mu.Lock()
	e, ok := c.results[runID]
	c.mu.Unlock()
	if ok {
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
	e = &runEntry{res: res, plots: map[string]string{}}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.results[runID]; ok {
		return old, nil
	}
	c.results[runID] = e
	c.order = append(c.order, runID)
	if len(c.order) > cachedRuns {
		delete(c.results, c.order[0])
		c.order = c.order[1:]
	}
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
