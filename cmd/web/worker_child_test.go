package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/pgtest"
)

// TestMain runs the server's main in the processes that workerChild
// starts: in a test, this binary is the test binary.
func TestMain(m *testing.M) {
	if os.Getenv(workerChildEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestChildEnv(t *testing.T) {
	t.Parallel()
	got := childEnv([]string{"PATH=/bin", "ROLE=all", "DEBUG_ADDR=127.0.0.1:6060", "ADDR=:1", "HOME=/root"},
		map[string]string{"ROLE": "", "DATABASE_URL": "postgres://x/y", "ADDR": ":8080", "BASE_URL": "", "DEBUG_ADDR": "127.0.0.1:6060"})
	want := []string{"ADDR=:8080", workerChildEnv + "=1", "DATABASE_URL=postgres://x/y", "HOME=/root", "PATH=/bin", "ROLE=worker"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}

// threadNices is the niceness of every thread of process pid (field 19 of
// /proc/pid/task/tid/stat).
func threadNices(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var nices []int
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// The command sits in parentheses and may hold spaces: count
		// the fields after its closing one (state is field 3).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		n, err := strconv.Atoi(f[19-3])
		if err != nil {
			t.Fatalf("thread %s: %v", task.Name(), err)
		}
		nices = append(nices, n)
	}
	return nices
}

// With ROLE=all the background jobs run in a child process at WORKER_NICE,
// every thread of it: a deletion's purge is done there, the serving
// process keeps its own priority, and the child ends with the server.
func TestAllRoleRunsJobsInNicedChild(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	addr := freeAddr(t)
	envm := map[string]string{"DATABASE_URL": dbURL, "ADDR": addr, "WORKER_NICE": "7",
		"ADMIN_EMAIL": "boss@example.org", "ADMIN_PASSWORD": "boss-password"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(envm), &out, io.Discard) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "admin login:") {
		select {
		case err := <-done:
			t.Fatalf("server stopped: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start:\n%s", out.String())
		}
	}
	m := regexp.MustCompile(`background jobs run in process (\d+) at nice 7`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the server does not say where its background jobs run:\n%s", out.String())
	}
	pid, _ := strconv.Atoi(m[1])
	if pid == os.Getpid() || pid == 0 {
		t.Fatalf("the jobs' process is %d, this one is %d", pid, os.Getpid())
	}

	base := "http://" + addr
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, step := range []struct{ path, form string }{
		{"/admin/login", "email=boss%40example.org&password=boss-password"},
		{"/admin/studies/demo/delete", "confirm=yes"},
	} {
		res, err := c.Post(base+step.path, "application/x-www-form-urlencoded", strings.NewReader(step.form))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d", step.path, res.StatusCode)
		}
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM studies`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatal("the deleted demo study was not purged")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, n := range threadNices(t, pid) {
		if n != 7 {
			t.Fatalf("a thread of the child %d runs at nice %d, want 7 (all: %v)", pid, n, threadNices(t, pid))
		}
	}
	for _, n := range threadNices(t, os.Getpid()) {
		if n != 0 {
			t.Fatalf("a thread of the serving process runs at nice %d", n)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// The child ended with the server and was reaped.
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Fatalf("the child %d outlived the server", pid)
	}
}
