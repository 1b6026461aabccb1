package faults

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/loadgen"
)

var (
	runFaults   = flag.Bool("faults", false, "run the fault harness: a private PostgreSQL cluster, the server binary and the load generator (about 3 minutes)")
	concurrency = flag.Int("faults.concurrency", 50, "simulated annotators during the faults")
	thinkFlag   = flag.String("faults.think", "exp:100ms", "the annotators' think time")
	reportFile  = flag.String("faults.report", "", "also write the results table (Markdown) to this file")
)

const (
	warmup = 5 * time.Second  // load before each fault
	after  = 15 * time.Second // load after each fault ends
	outage = 10 * time.Second // how long faults (c) and (d) last
)

// fault is one thing that goes wrong. inject makes it happen and returns
// once it is over (the harness notes the time), with a remark for the table.
type fault struct {
	name   string
	inject func(h *harness) string
}

type harness struct {
	t   *testing.T
	pg  *cluster
	srv *server
}

var allFaults = []fault{
	{"(a) kill -9 the server, restart it", func(h *harness) string {
		h.srv.kill()
		h.srv.start()
		return "fault ends when the new process starts"
	}},
	{"(b) restart PostgreSQL (pg_ctl restart -m fast)", func(h *harness) string {
		start := time.Now()
		h.pg.pgctl("restart")
		return fmt.Sprintf("the restart took %.1f s", time.Since(start).Seconds())
	}},
	{"(c) PostgreSQL refuses connections for 10 s", func(h *harness) string {
		ctx := context.Background()
		conn := h.pg.connect(ctx, "postgres")
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "ALTER DATABASE closer ALLOW_CONNECTIONS false"); err != nil {
			h.t.Fatal(err)
		}
		var n int
		// In the select list, so it runs only on the rows the WHERE keeps.
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = 'closer' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			h.t.Fatal(err)
		}
		time.Sleep(outage)
		if _, err := conn.Exec(ctx, "ALTER DATABASE closer ALLOW_CONNECTIONS true"); err != nil {
			h.t.Fatal(err)
		}
		return fmt.Sprintf("ALLOW_CONNECTIONS false and the %d open connections terminated", n)
	}},
	{"(d) the app's pool filled by blocked queries for 10 s", func(h *harness) string {
		// An outside session takes an exclusive lock on answers: every
		// request of the app then waits on it holding one of the app's
		// pooled connections, so the pool fills with the app's own queries
		// (sessions of pg_sleep from outside would not touch the app's pool).
		ctx := context.Background()
		locker := h.pg.connect(ctx, "closer")
		defer locker.Close(ctx)
		watcher := h.pg.connect(ctx, "closer")
		defer watcher.Close(ctx)
		tx, err := locker.Begin(ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE answers IN ACCESS EXCLUSIVE MODE"); err != nil {
			h.t.Fatal(err)
		}
		time.Sleep(outage / 2)
		var waiting, app int
		if err := watcher.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'), count(*)
			FROM pg_stat_activity
			WHERE datname = 'closer' AND backend_type = 'client backend' AND pid NOT IN ($1, $2)`,
			locker.PgConn().PID(), watcher.PgConn().PID()).Scan(&waiting, &app); err != nil {
			h.t.Fatal(err)
		}
		time.Sleep(outage - outage/2)
		if err := tx.Commit(ctx); err != nil {
			h.t.Fatal(err)
		}
		return fmt.Sprintf("halfway, %d of the app's %d connections waited on the lock", waiting, app)
	}},
}

// row is one fault's outcome.
type row struct {
	name     string
	res      *loadgen.Result
	runErr   error
	length   time.Duration // from the fault's start to its end
	stall    time.Duration // the longest time without an acknowledged answer, from the fault's start to the first answer after its end
	recovery time.Duration // from the fault's end to the first acknowledged answer; -1: none
	health   string        // what /healthz said during the fault
	errLog   string        // the server's ERROR lines during the run, by cause
	note     string
}

func TestFaults(t *testing.T) {
	t.Parallel()
	if !*runFaults {
		t.Skip("the fault harness runs only when asked: go test ./internal/faults -faults -v " +
			"(it starts a private PostgreSQL cluster and the server binary, and takes about 3 minutes)")
	}
	think, err := loadgen.ParseThink(*thinkFlag)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "closer-faults-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept %s (server log web.log, PostgreSQL log pg/server.log)", root)
			return
		}
		os.RemoveAll(root)
	})
	bin := buildServer(t, root)
	pg := startCluster(t, root)
	srv := newServer(t, bin, root, pg.url("closer"))
	srv.start()
	if err := srv.waitHealthy(time.Minute); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, pg: pg, srv: srv}

	var rows []row
	for i, f := range allFaults {
		t.Logf("%s ...", f.name)
		r := h.runFault(f, loadgen.Config{
			BaseURL: srv.base, Study: "demo", Concurrency: *concurrency, Think: think,
			Duration: 10 * time.Minute, AdminToken: adminToken, Seed: uint64(i + 1),
		})
		rows = append(rows, r)
		if err := srv.waitHealthy(time.Minute); err != nil {
			t.Fatalf("after %s: %v", f.name, err)
		}
	}
	table := markdownTable(rows)
	t.Logf("results (%d annotators, think %s):\n%s", *concurrency, think, table)
	if *reportFile != "" {
		if err := os.WriteFile(*reportFile, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, r := range rows {
		if r.runErr != nil {
			t.Errorf("%s: the load run failed: %v", r.name, r.runErr)
			continue
		}
		if c := r.res.Check; !c.OK() {
			t.Errorf("%s: acknowledged answers: %s", r.name, c.Problems())
		}
		if n := r.res.ServerErrors(); n > 0 {
			t.Errorf("%s: %d responses with a 5xx other than 503", r.name, n)
		}
		if r.recovery < 0 {
			t.Errorf("%s: no answer was acknowledged after the fault ended", r.name)
		}
	}
}

// runFault drives the load, injects the fault after the warm-up, keeps the
// load going for a while after the fault ends, then stops it and lets the
// load generator check the export.
func (h *harness) runFault(f fault, cfg loadgen.Config) row {
	logStart := h.srv.logSize()
	var acks ackTimes
	cfg.OnEvent = acks.add
	stop := make(chan struct{})
	cfg.Stop = stop
	type outcome struct {
		res *loadgen.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := loadgen.Run(context.Background(), cfg)
		done <- outcome{res, err}
	}()
	time.Sleep(warmup)
	if acks.count() == 0 {
		close(stop)
		o := <-done
		h.t.Fatalf("%s: no answer was acknowledged in the %s before the fault: %v", f.name, warmup, o.err)
	}
	health := startHealthPoll(h.srv.base)
	start := time.Now()
	note := f.inject(h)
	end := time.Now()
	healthSeen := health.stop()
	time.Sleep(after)
	close(stop)
	o := <-done
	r := row{name: f.name, res: o.res, runErr: o.err, length: end.Sub(start), health: healthSeen, note: note,
		errLog: h.srv.errorsSince(logStart)}
	r.stall, r.recovery = acks.around(start, end)
	return r
}

// ackTimes collects when answers were acknowledged.
type ackTimes struct {
	mu sync.Mutex
	at []time.Time
}

func (a *ackTimes) add(e loadgen.Event) {
	if e.Endpoint != loadgen.Answer || e.Status/100 != 2 {
		return
	}
	a.mu.Lock()
	a.at = append(a.at, e.At)
	a.mu.Unlock()
}

func (a *ackTimes) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// around returns the longest time without an acknowledged answer from the
// last one before start to the first one after end, and the time from end
// to that first one (-1 if there is none).
func (a *ackTimes) around(start, end time.Time) (stall, recovery time.Duration) {
	a.mu.Lock()
	at := slices.Clone(a.at)
	a.mu.Unlock()
	slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
	prev := start
	for _, t := range at {
		if t.Before(start) {
			prev = t
			continue
		}
		stall = max(stall, t.Sub(prev))
		prev = t
		if !t.Before(end) {
			return stall, t.Sub(end)
		}
	}
	return max(stall, time.Since(prev)), -1
}

// healthPoll asks /healthz every 250 ms and tallies the answers.
type healthPoll struct {
	quit chan struct{}
	done chan map[string]int
}

func startHealthPoll(base string) *healthPoll {
	p := &healthPoll{quit: make(chan struct{}), done: make(chan map[string]int)}
	go func() {
		seen := map[string]int{}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			s := "none"
			if st := healthStatus(base); st != 0 {
				s = strconv.Itoa(st)
			}
			seen[s]++
			select {
			case <-p.quit:
				p.done <- seen
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// stop ends the polling and returns e.g. "200 ×3, 500 ×20, none ×8"
// ("none": no response within 2 s, or no connection).
func (p *healthPoll) stop() string {
	close(p.quit)
	seen := <-p.done
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(seen)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", s, seen[s]))
	}
	return strings.Join(parts, ", ")
}

func markdownTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| fault | answers acknowledged | lost | duplicated | unacknowledged (of which stored) | 5xx other than 503 | 503 | connection errors | /healthz during the fault | longest time without answers | first answer after the fault ended | slowest answer | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.res == nil {
			fmt.Fprintf(&b, "| %s | load run failed: %v ||||||||||||\n", r.name, r.runErr)
			continue
		}
		c := r.res.Check
		if c == nil {
			c = &loadgen.Check{}
		}
		var s503, transport int
		for _, ep := range loadgen.Endpoints {
			s503 += r.res.Endpoints[ep].Status[http.StatusServiceUnavailable]
			transport += r.res.Endpoints[ep].Status[0]
		}
		recovery := "never"
		if r.recovery >= 0 {
			recovery = fmt.Sprintf("%.1f s", r.recovery.Seconds())
		}
		note := r.note
		if c.Rejected > 0 {
			note += fmt.Sprintf("; %d answers refused with a 4xx (%d of them stored)", c.Rejected, c.RejectedStored)
		}
		if c.WrongCloser > 0 {
			note += fmt.Sprintf("; %d stored with another closer", c.WrongCloser)
		}
		if r.runErr != nil {
			note += "; " + r.runErr.Error()
		}
		if r.errLog != "" {
			note += "; server ERROR log lines: " + r.errLog
		}
		fmt.Fprintf(&b, "| %s (%.1f s) | %d | %d | %d | %d (%d) | %d | %d | %d | %s | %.1f s | %s | %.1f s | %s |\n",
			r.name, r.length.Seconds(), c.Acknowledged, c.Lost, c.Duplicated, c.Unacknowledged, c.UnacknowledgedStored,
			r.res.ServerErrors(), s503, transport, r.health, r.stall.Seconds(), recovery,
			r.res.Endpoints[loadgen.Answer].Percentile(100).Seconds(), note)
	}
	return b.String()
}
