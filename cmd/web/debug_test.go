package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/pgtest"
)

// DEBUG_ADDR serves the profiler on its own listener; the public one
// never serves it.
func TestDebugAddrServesProfilerApart(t *testing.T) {
	t.Parallel()
	debug := freeAddr(t)
	envm := map[string]string{"DATABASE_URL": pgtest.EmptyDB(t), "ADDR": freeAddr(t), "DEBUG_ADDR": debug}
	serveOnce(t, envm, func(base string) {
		res, err := http.Get("http://" + debug + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("profiler on DEBUG_ADDR: %d", res.StatusCode)
		}
		res, err = http.Get(base + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("profiler on ADDR: %d, want 404", res.StatusCode)
		}
	})
}

func TestConfigDebugAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ addr, err string }{
		{"127.0.0.1:6060", ""},
		{"6060", "DEBUG_ADDR \"6060\" is not host:port"},
		{":8080", "must differ from ADDR"},
	} {
		_, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "DEBUG_ADDR": c.addr}))
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("DEBUG_ADDR %q: %v, want %q", c.addr, err, c.err)
		}
	}
}
