package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/loadgen"
)

// diskSize is the size of the small file system that holds the closer
// database: room for the migrated database and the demo study, filled
// up during the fault.
const diskSize = "96m"

// TestFaultDiskFull runs the demo study on a database whose data volume
// fills up: the closer database lives in a tablespace on a small tmpfs
// (the cluster's WAL stays on the main disk, as it often has a volume of
// its own: a full WAL volume makes PostgreSQL PANIC and restart, which
// the restart faults cover). During the fault a file fills the tmpfs for
// 10 s, then is removed. Every write that needs a new page fails with
// SQLSTATE 53100 (could not extend file: No space left on device); the app
// must answer 503 with Retry-After (never a 500 nor an acknowledged answer
// that was not stored), /healthz must say 503, and answers must be
// acknowledged again once space is freed.
//
//	go test ./internal/faults -faults -run TestFaultDiskFull -v
//
// It needs root (mount -t tmpfs) and is skipped otherwise.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	if !*runFaults {
		t.Skip("the fault harness runs only when asked: go test ./internal/faults -faults -run TestFaultDiskFull -v")
	}
	think, err := loadgen.ParseThink(*thinkFlag)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "closer-diskfull-")
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
	// Mounted before the cluster starts, so that it is unmounted after the
	// cluster stops (cleanups run last first).
	disk := filepath.Join(root, "small")
	if err := os.Mkdir(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+diskSize+",mode=0700", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root and CAP_SYS_ADMIN): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", disk).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v %s", disk, err, out)
		}
	})

	bin := buildServer(t, root)
	pg := startCluster(t, root)
	if pg.owner != nil {
		uid, _ := strconv.Atoi(pg.owner.Uid)
		gid, _ := strconv.Atoi(pg.owner.Gid)
		if err := os.Chown(disk, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn := pg.connect(ctx, "postgres")
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLESPACE small LOCATION '%s'`, disk),
		`ALTER DATABASE closer SET TABLESPACE small`, // nobody is connected to it yet
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)

	srv := newServer(t, bin, root, pg.url("closer"))
	srv.start()
	if err := srv.waitHealthy(time.Minute); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, pg: pg, srv: srv}

	var probe joinProbe
	f := fault{"(e) the database's volume full for 10 s", func(h *harness) string {
		free := diskFree(t, disk)
		filler := filepath.Join(disk, "filler")
		filled := fill(t, filler)
		stop := probe.start(srv.base)
		time.Sleep(outage)
		probe.stop(stop)
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%.1f MiB free on the %s tmpfs filled with %.1f MiB; during it %s",
			float64(free)/(1<<20), diskSize, float64(filled)/(1<<20), probe.summary())
	}}
	t.Logf("%s ...", f.name)
	r := h.runFault(f, loadgen.Config{
		BaseURL: srv.base, Study: "demo", Concurrency: *concurrency, Think: think,
		Duration: 10 * time.Minute, AdminToken: adminToken, Seed: 5,
	})
	if err := srv.waitHealthy(time.Minute); err != nil {
		t.Fatalf("after %s: %v", f.name, err)
	}
	table := markdownTable([]row{r})
	t.Logf("results (%d annotators, think %s):\n%s", *concurrency, think, table)
	if *reportFile != "" {
		if err := os.WriteFile(*reportFile, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	if r.runErr != nil {
		t.Fatalf("the load run failed: %v", r.runErr)
	}
	if c := r.res.Check; !c.OK() {
		t.Errorf("acknowledged answers: %s", c.Problems())
	}
	if n := r.res.ServerErrors(); n > 0 {
		t.Errorf("%d responses with a 5xx other than 503", n)
	}
	if r.recovery < 0 {
		t.Error("no answer was acknowledged after space was freed")
	}
	if !strings.Contains(r.health, "503") {
		t.Errorf("/healthz during the fault: %s, want 503", r.health)
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.status[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no participant creation was refused with 503 while the disk was full: %s", probe.summaryLocked())
	}
	if probe.noRetryAfter > 0 {
		t.Errorf("%d 503s without Retry-After", probe.noRetryAfter)
	}
	for st, n := range probe.status {
		if st >= 500 && st != http.StatusServiceUnavailable {
			t.Errorf("participant creation: %d × %d", n, st)
		}
	}
	if probe.healthDiskFull == 0 {
		t.Error("/healthz never said \"disk full\" while the disk was full")
	}
}

// diskFree is the space left on the file system at dir (bytes).
func diskFree(t *testing.T, dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Bavail * uint64(st.Bsize)
}

// fill writes zeros to path until the file system is full and returns
// how much it wrote.
func fill(t *testing.T, path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := f.Write(buf)
		n += int64(m)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if m < len(buf) {
			buf = buf[:len(buf)-m] // the short write's rest, then ENOSPC
		}
	}
}

// joinProbe creates participants (a write) and asks /healthz every 100 ms
// while the disk is full, noting statuses, Retry-After and healthz's
// reason.
type joinProbe struct {
	mu             sync.Mutex
	status         map[int]int
	noRetryAfter   int
	healthDiskFull int
	health         map[int]int
	wg             sync.WaitGroup
}

func (p *joinProbe) start(base string) chan struct{} {
	p.status, p.health = map[int]int{}, map[int]int{}
	quit := make(chan struct{})
	c := http.Client{Timeout: 5 * time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
			res, err := c.Post(base+"/api/v1/studies/demo/participants", "application/json", strings.NewReader("{}"))
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body) // draining only, so the connection is reused
				res.Body.Close()
			}
			hres, herr := c.Get(base + "/healthz")
			var hbody []byte
			if herr == nil {
				hbody, _ = io.ReadAll(hres.Body)
				hres.Body.Close()
			}
			p.mu.Lock()
			if err == nil {
				p.status[res.StatusCode]++
				if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
					p.noRetryAfter++
				}
			} else {
				p.status[0]++
			}
			if herr == nil {
				p.health[hres.StatusCode]++
				if hres.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(hbody), "disk full") {
					p.healthDiskFull++
				}
			}
			p.mu.Unlock()
		}
	}()
	return quit
}

func (p *joinProbe) stop(quit chan struct{}) {
	close(quit)
	p.wg.Wait()
}

func (p *joinProbe) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.summaryLocked()
}

func (p *joinProbe) summaryLocked() string {
	return fmt.Sprintf("participant creation %v (0: no response), /healthz %v (%d saying disk full)", p.status, p.health, p.healthDiskFull)
}
