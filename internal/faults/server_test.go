package faults

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Credentials the harness gives the server.
const (
	adminEmail    = "faults@example.org"
	adminPassword = "faults-password"
	adminToken    = "faults-admin-token-0123456789"
)

// server is the real server binary (cmd/web), started as a separate
// process so that it can be killed with SIGKILL.
type server struct {
	t    *testing.T
	bin  string
	env  []string
	base string
	log  *os.File // stdout and stderr of every start, appended
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// buildServer builds cmd/web into dir.
func buildServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "web")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/closer-lab/closer/cmd/web").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/web: %v\n%s", err, out)
	}
	return bin
}

func newServer(t *testing.T, bin, dir, databaseURL string) *server {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	log, err := os.Create(filepath.Join(dir, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	s := &server{
		t: t, bin: bin, base: "http://" + addr, log: log,
		env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"DATABASE_URL=" + databaseURL, "ADDR=" + addr,
			"ADMIN_EMAIL=" + adminEmail, "ADMIN_PASSWORD=" + adminPassword, "ADMIN_API_TOKEN=" + adminToken,
			"JOIN_RATE=0", // closer load joins every annotator from loopback
		},
	}
	t.Cleanup(s.stop)
	return s
}

// start starts the binary without waiting for it to serve.
func (s *server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start the server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // an exit after a signal is an error; done is what counts
	s.cmd, s.done = cmd, done
}

// waitHealthy waits until /healthz says 200.
func (s *server) waitHealthy(limit time.Duration) error { //nolint:unparam // the limit is named at the call
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("the server exited: %v (log: %s)", s.cmd.ProcessState, s.log.Name())
		default:
		}
		if healthStatus(s.base) == http.StatusOK {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the server was not healthy after %s (log: %s)", limit, s.log.Name())
}

// kill sends SIGKILL to the server process it started and waits for it to
// exit.
func (s *server) kill() {
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatalf("kill -9 the server: %v", err)
	}
	<-s.done
}

// stop shuts the server down gracefully (SIGTERM), killing it if it does not
// exit within 30 s.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// healthStatus is the status of GET /healthz, or 0 when there is no
// response within 2 s.
func healthStatus(base string) int {
	c := http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Get(base + "/healthz")
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// logSize is the length of the server's log so far.
func (s *server) logSize() int64 {
	fi, err := s.log.Stat()
	if err != nil {
		s.t.Fatal(err)
	}
	return fi.Size()
}

// errCause names what an ERROR line of the server's log is about: its
// SQLSTATE, or a network error.
var errCause = regexp.MustCompile(`SQLSTATE [0-9A-Z]{5}|connection refused|connection reset by peer|unexpected EOF|timeout`)

// errMsg is the message of a log line (slog's text format), which says
// which part of the server logged it.
var errMsg = regexp.MustCompile(`msg=("(?:[^"\\]|\\.)*"|\S+)`)

// errorsSince counts the server's ERROR log lines written after offset, by
// message and cause, e.g. "12 (request failed: SQLSTATE 57P01 ×10, ...)".
func (s *server) errorsSince(offset int64) string {
	data, err := os.ReadFile(s.log.Name())
	if err != nil {
		s.t.Fatal(err)
	}
	n, causes := 0, map[string]int{}
	for line := range strings.Lines(string(data[min(offset, int64(len(data))):])) {
		if !strings.Contains(line, "level=ERROR") {
			continue
		}
		n++
		cause := errCause.FindString(line)
		if cause == "" {
			cause = "other"
		}
		if m := errMsg.FindStringSubmatch(line); m != nil {
			cause = strings.Trim(m[1], `"`) + ": " + cause
		}
		causes[cause]++
	}
	if n == 0 {
		return ""
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(causes)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", c, causes[c]))
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}
