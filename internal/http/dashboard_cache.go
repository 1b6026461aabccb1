package http

import (
	"context"
	"sync"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/recompute"
)

// dashCache keeps what the dashboard would otherwise recompute on every
// load of a large study: the decoded results of a run and the plots drawn
// from them (a finished run never changes), and the aggregates over the
// answers, valid while the study's collect.DashboardVersion key is the same
// (no new answer, participant or exclusion). Each replica has its own; the
// keys come from PostgreSQL, so no replica serves stale figures.
type dashCache struct {
	mu      sync.Mutex
	results map[int64]*runEntry // by run id
	order   []int64             // results, oldest first
	figures map[int64]figuresEntry
	people  map[peopleKey]peopleEntry
}

// runEntry is a decoded run result and its plots (SVG), by item count.
type runEntry struct {
	res   *recompute.Result
	plots map[string]string
}

type figuresEntry struct {
	key   string
	stats collect.Stats
	figs  collect.DashboardFigures
}

type peopleKey struct {
	study int64
	page  int
}

type peopleEntry struct {
	key   string
	rows  []collect.DashboardParticipant
	total int
}

const (
	cachedRuns    = 8   // decoded results kept
	cachedStudies = 256 // aggregate entries kept before the map is cleared
)

func newDashCache() *dashCache {
	return &dashCache{results: map[int64]*runEntry{}, figures: map[int64]figuresEntry{}, people: map[peopleKey]peopleEntry{}}
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

// aggregates returns the study's stats and figures for version key.
func (c *dashCache) aggregates(ctx context.Context, store *collect.Store, studyID int64, key string) (collect.Stats, collect.DashboardFigures, error) {
	c.mu.Lock()
	e, ok := c.figures[studyID]
	c.mu.Unlock()
	if ok && e.key == key {
		return e.stats, e.figs, nil
	}
	stats, figs, err := store.Dashboard(ctx, studyID, dashboardTimeBuckets, dashboardRTBins, dashboardTopContra)
	if err != nil {
		return stats, figs, err
	}
	c.mu.Lock()
	if len(c.figures) >= cachedStudies {
		clear(c.figures)
	}
	c.figures[studyID] = figuresEntry{key, stats, figs}
	c.mu.Unlock()
	return stats, figs, nil
}

// participants returns one page of the participants table for version key.
func (c *dashCache) participants(ctx context.Context, store *collect.Store, studyID int64, page int, key string) ([]collect.DashboardParticipant, int, error) {
	k := peopleKey{studyID, page}
	c.mu.Lock()
	e, ok := c.people[k]
	c.mu.Unlock()
	if ok && e.key == key {
		return e.rows, e.total, nil
	}
	rows, total, err := store.DashboardParticipants(ctx, studyID, peoplePageSize, (page-1)*peoplePageSize)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	if len(c.people) >= cachedStudies {
		clear(c.people)
	}
	c.people[k] = peopleEntry{key, rows, total}
	c.mu.Unlock()
	return rows, total, nil
}
