package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/pgtest"
)

// A web replica answers a study's deletion at once and enqueues its purge;
// a worker replica, started later, purges it: every row of the study goes.
func TestDeletionPurgedByWorkerReplica(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	web := map[string]string{"DATABASE_URL": dbURL, "ADDR": freeAddr(t), "ROLE": "web",
		"ADMIN_EMAIL": "boss@example.org", "ADMIN_PASSWORD": "boss-password"}
	serveOnce(t, web, func(base string) {
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
		if res, err := http.Get(base + "/s/demo"); err != nil || res.StatusCode != http.StatusNotFound {
			t.Fatalf("the deleted demo study's page: %v %v", res, err)
		}
	})

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id int64
	if err := conn.QueryRow(ctx, `SELECT id FROM studies WHERE deleted_at IS NOT NULL`).Scan(&id); err != nil {
		t.Fatalf("the deleted study: %v", err)
	}
	// Its rows, and its own row.
	count := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM studies WHERE id = $1) + (SELECT count(*) FROM items WHERE study_id = $1)`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 41 {
		t.Fatalf("a web replica purged: %d of the study's 41 rows left", n)
	}

	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	worker := map[string]string{"DATABASE_URL": dbURL, "ADDR": freeAddr(t), "ROLE": "worker"}
	go func() { done <- run(wctx, nil, env(worker), io.Discard, io.Discard) }()
	deadline := time.Now().Add(time.Minute)
	for {
		n := count()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the worker replica did not purge within a minute: %d of the study's rows left", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
