package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/pgtest"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serveOnce runs the server until it printed its URLs, calls check, then
// stops it (as SIGTERM would) and returns what it printed.
func serveOnce(t *testing.T, envm map[string]string, check func(base string)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(envm), &out, io.Discard) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "admin login:") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("server stopped: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("server did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	check("http://" + envm["ADDR"])
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	return out.String()
}

// With no arguments the binary migrates, bootstraps the admin and its API
// token, creates the demo study once, serves, and shuts down cleanly.
func TestServeBootstrapsAndShutsDown(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	envm := map[string]string{
		"DATABASE_URL": dbURL, "ADDR": freeAddr(t),
		"ADMIN_EMAIL": "boss@example.org", "ADMIN_PASSWORD": "boss-password", "ADMIN_API_TOKEN": "script-token-0123456789",
	}
	out := serveOnce(t, envm, func(base string) {
		for _, slug := range []string{"demo", "demo-words"} {
			res, err := http.Get(base + "/s/" + slug)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("%s study page: %d", slug, res.StatusCode)
			}
		}
		req, _ := http.NewRequest("GET", base+"/api/v1/studies/demo/triplets.csv", nil)
		req.Header.Set("Authorization", "Bearer script-token-0123456789")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("export with ADMIN_API_TOKEN: %d", res.StatusCode)
		}
	})
	base := "http://" + envm["ADDR"]
	for _, want := range []string{"demo study:  " + base + "/s/demo", "text demo:   " + base + "/s/demo-words", "admin login: " + base + "/admin/login"} {
		if !strings.Contains(out, want) {
			t.Fatalf("start-up output lacks %q:\n%s", want, out)
		}
	}
	// A second start keeps everything and creates nothing new.
	envm["ADDR"] = freeAddr(t)
	serveOnce(t, envm, func(string) {})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var studies, items, admins, tokens int
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM studies), (SELECT count(*) FROM items),
		(SELECT count(*) FROM admins), (SELECT count(*) FROM api_tokens)`).Scan(&studies, &items, &admins, &tokens)
	if err != nil {
		t.Fatal(err)
	}
	// The image demo's 40 disks and the text demo's 20 words, once.
	if studies != 2 || items != 60 || admins != 1 || tokens != 1 {
		t.Fatalf("after two starts: %d studies, %d items, %d admins, %d tokens; want 2, 60, 1, 1", studies, items, admins, tokens)
	}
}

func TestMigrateCommands(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	ctx := context.Background()
	var out bytes.Buffer
	e := env(map[string]string{"DATABASE_URL": dbURL})
	if err := run(ctx, []string{"migrate", "up"}, e, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"migrate", "down"}, e, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.String() != "migrations applied\nmigrations reverted\n" {
		t.Fatalf("output %q", out.String())
	}
	if err := run(ctx, []string{"migrate", "sideways"}, e, &out, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Fatalf("bad subcommand: %v", err)
	}
}

// pool_max_conns in DATABASE_URL sizes the pool (README) and the server
// starts with it: the migrations no longer pass it to PostgreSQL.
func TestServeWithPoolMaxConns(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	sized := dbURL + sep + "pool_max_conns=3"
	pcfg, err := poolConfig(sized)
	if err != nil || pcfg.MaxConns != 3 {
		t.Fatalf("poolConfig(%q): MaxConns %v, %v; want 3", sized, pcfg, err)
	}
	if pcfg, err := poolConfig(dbURL); err != nil || pcfg.MaxConns != defaultMaxConns {
		t.Fatalf("poolConfig without pool_max_conns: %v, %v; want %d", pcfg, err, defaultMaxConns)
	}
	envm := map[string]string{"DATABASE_URL": sized, "ADDR": freeAddr(t)}
	serveOnce(t, envm, func(base string) {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("/healthz with pool_max_conns=3: %d", res.StatusCode)
		}
	})
}
