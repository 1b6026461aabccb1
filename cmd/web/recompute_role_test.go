package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/pgtest"
)

func TestConfigRole(t *testing.T) {
	t.Parallel()
	for role, want := range map[string][2]bool{"": {true, true}, "all": {true, true}, "WEB": {true, false}, "worker": {false, true}} {
		t.Run("ROLE="+role, func(t *testing.T) {
			t.Parallel()
			c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "ROLE": role}))
			if err != nil {
				t.Fatal(err)
			}
			if c.runsWeb() != want[0] || c.runsWorker() != want[1] {
				t.Errorf("web %v worker %v, want %v %v", c.runsWeb(), c.runsWorker(), want[0], want[1])
			}
		})
	}
	_, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "ROLE": "both", "RECOMPUTE_WORKERS": "0"}))
	if err == nil || !strings.Contains(err.Error(), "ROLE") || !strings.Contains(err.Error(), "RECOMPUTE_WORKERS") {
		t.Fatalf("bad ROLE and RECOMPUTE_WORKERS: %v", err)
	}
}

// A worker replica runs without an HTTP server and stops on the signal:
// while it runs, a connection to its ADDR is refused (nothing listens
// there), and it is still running after the checks.
func TestWorkerRoleServesNoHTTP(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	addr := freeAddr(t)
	go func() {
		done <- run(ctx, nil, env(map[string]string{"DATABASE_URL": dbURL, "ROLE": "worker", "ADDR": addr}), &out, io.Discard)
	}()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "recompute worker is running") {
		if time.Now().After(deadline) {
			t.Fatalf("worker did not start: %s", out.String())
		}
		select {
		case err := <-done:
			t.Fatalf("worker stopped before it ran: %v; output: %s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if strings.Contains(out.String(), "serving") {
		t.Fatalf("a worker says it serves HTTP: %s", out.String())
	}
	// Dial ADDR a number of times while the worker runs: a server started
	// in a goroutine could bind the port a moment after the line above, so
	// one dial alone might come too early to see it. Every dial must be
	// refused (ECONNREFUSED: nothing listens, as opposed to a timeout or
	// another error, which would not show that).
	for i := range 25 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
			t.Fatalf("dial %d: a worker accepts connections on ADDR %s", i, addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %d to %s: %v, want connection refused", i, addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the worker stopped by itself (%v); the refused dials prove nothing", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
