package web

import (
	"context"
	"sync"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// dashCache keeps what the dashboard would otherwise recompute on every
// load of a large study: the decoded results of a run and the plots drawn
// from them (a finished run never changes), and per study the additive
// tally of its answers (dashboard.Tally) up to a watermark, brought
// up to date on each load by reading only the answers after it. The tally is
// counted again from scratch when the study's participants change (added,
// excluded, included: collect.DashboardVersion's Structure) or when the
// answers below the watermark are not the ones counted. Each replica has its
// own; the watermark and the checks are read from PostgreSQL, so no replica
// serves stale figures.
type dashCache struct {
	mu      sync.Mutex
	results map[int64]*runEntry // by run id
	order   []int64             // results, oldest first
	tallies map[int64]*tallyEntry
}

// tallyEntry is a study's tally; mu serialises its updates and readers.
type tallyEntry struct {
	mu        sync.Mutex
	structure string
	tally     *dashboard.Tally
}

// runEntry is a decoded run result and its plots (SVG), by item count.
type runEntry struct {
	res   *recompute.Result
	plots map[string]string
}

const (
	cachedRuns    = 8  // decoded results kept
	cachedTallies = 64 // study tallies kept before the map is cleared (a 100,000-answer study's is a few MB)
)

func newDashCache() *dashCache {
	return &dashCache{results: map[int64]*runEntry{}, tallies: map[int64]*tallyEntry{}}
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

// withTally calls fn with the study's tally, current as of this call:
// advanced past the answers added since the last call, or counted from
// scratch when there is none yet, when structure (the participants'
// fingerprint) changed or when the advance finds the counted answers
// changed. fn must not keep t.
func (c *dashCache) withTally(ctx context.Context, store *collect.Store, studyID int64, structure string, fn func(t *dashboard.Tally) error) error {
	c.mu.Lock()
	e, ok := c.tallies[studyID]
	if !ok {
		if len(c.tallies) >= cachedTallies {
			clear(c.tallies)
		}
		e = &tallyEntry{}
		c.tallies[studyID] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := e.tally == nil || e.structure != structure
	if !fresh {
		d, err := store.DashboardAnswersAfter(ctx, studyID, e.tally.Seq)
		if err != nil {
			return err
		}
		fresh = !e.tally.Advance(d)
	}
	if fresh {
		e.tally = nil
		counts, err := store.DashboardCounts(ctx, studyID, dashboardTopContra)
		if err != nil {
			return err
		}
		e.tally, e.structure = dashboard.NewTally(counts, dashboardTopContra), structure
	}
	return fn(e.tally)
}

// stats returns the study's counts, current as of this call.
func (c *dashCache) stats(ctx context.Context, store *collect.Store, studyID int64, structure string) (study.Stats, error) {
	var st study.Stats
	err := c.withTally(ctx, store, studyID, structure, func(t *dashboard.Tally) error {
		st = t.Stats()
		return nil
	})
	return st, err
}
