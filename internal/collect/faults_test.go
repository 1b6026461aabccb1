package collect_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// Text PostgreSQL cannot store is a user error (KindInvalid) whatever the
// store call that meets it, never a server error: a NUL character or
// invalid UTF-8 in a text column (SQLSTATE 22021), and a NUL in jsonb
// (22P05).
func TestBadTextIsInvalid(t *testing.T) {
	t.Parallel()
	s, st := newStudy(t, 3, 5)
	ctx := context.Background()
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		if _, _, err := s.CreateParticipant(ctx, st.ID, bad, nil); collect.KindOf(err) != study.KindInvalid {
			t.Errorf("external id %q: %v, want KindInvalid", bad, err)
		}
		if _, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s2", Title: bad, QuestionsPerParticipant: 1}); collect.KindOf(err) != study.KindInvalid {
			t.Errorf("title %q: %v, want KindInvalid", bad, err)
		}
	}
	_, err := collect.PoolOf(s).Exec(ctx, `SELECT $1::text::jsonb`, `{"a": "\u0000"}`)
	e, ok := collect.AsError(err)
	if !ok || e.Kind != study.KindInvalid || !strings.Contains(e.Msg, "NUL") {
		t.Errorf("NUL in jsonb: %v → %+v", err, e)
	}
	var n int
	if err := collect.PoolOf(s).QueryRow(ctx, `SELECT count(*) FROM participants`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d participants stored (%v)", n, err)
	}
}

// ConfigurePool's acquire timeout: under WithAcquireTimeout a store call
// that finds no free connection fails with ErrPoolTimeout (unavailable),
// while a context's own deadline stays a deadline, not unavailability; and
// only the wait for a connection is bounded, not the query.
func TestAcquireTimeout(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.NewDB(t)
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 1
	collect.ConfigurePool(pcfg)
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := collect.New(pool)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	held, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Ping(collect.WithAcquireTimeout(ctx, 50*time.Millisecond))
	if !errors.Is(err, collect.ErrPoolTimeout) || !collect.IsUnavailable(err) || collect.KindOf(err) != study.KindUnavailable {
		t.Errorf("no free connection under an acquire timeout: %v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = s.Ping(dctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || collect.IsUnavailable(err) {
		t.Errorf("no free connection before the context's deadline: %v (unavailable %t), want the deadline", err, collect.IsUnavailable(err))
	}
	held.Release()

	// With the connection free, a query may run past the acquire timeout.
	if _, err := pool.Exec(collect.WithAcquireTimeout(ctx, 100*time.Millisecond), `SELECT pg_sleep(0.5)`); err != nil {
		t.Errorf("a query longer than the acquire timeout: %v", err)
	}
}

// The failures of a database that is down, restarting or refusing
// connections are all unavailability: nobody listening, a session the
// server terminated, its connection closed, connections not allowed, and
// the server's refusals (too many connections, shutting down, starting).
func TestUnavailableErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	_, err = pgx.Connect(ctx, "postgres://postgres@"+closed+"/x?sslmode=disable")
	if !collect.IsUnavailable(err) || collect.KindOf(err) != study.KindUnavailable {
		t.Errorf("nobody listening: %v", err)
	}

	pool, dbURL := pgtest.NewDB(t)
	u, _ := url.Parse(dbURL)
	dbName := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	adminURL := os.Getenv("TEST_DATABASE_URL")
	if adminURL == "" {
		adminURL = pgtest.DefaultURL
	}
	server, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := server.Exec(ctx, `ALTER DATABASE `+dbName+` ALLOW_CONNECTIONS true`); err != nil {
			t.Log(err)
		}
		server.Close(ctx)
	})
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := server.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	exec(`SELECT pg_terminate_backend($1)`, pid)
	_, err = conn.Exec(ctx, `SELECT 1`)
	if !collect.IsUnavailable(err) {
		t.Errorf("a terminated session: %v", err)
	}
	_, err = conn.Exec(ctx, `SELECT 1`)
	if !collect.IsUnavailable(err) {
		t.Errorf("a closed connection: %v", err)
	}

	exec(`ALTER DATABASE ` + dbName + ` ALLOW_CONNECTIONS false`)
	pool.Reset()
	err = pool.Ping(ctx)
	if !collect.IsUnavailable(err) {
		t.Errorf("connections not allowed: %v", err)
	}

	// The server's refusals that a superuser's test cannot provoke.
	for _, code := range []string{"53300", "57P01", "57P03", "08006"} {
		if err := fmt.Errorf("op: %w", &pgconn.PgError{Code: code}); !collect.IsUnavailable(err) {
			t.Errorf("SQLSTATE %s not counted as unavailable", code)
		}
	}

	// And what is not unavailability stays itself.
	for _, err := range []error{
		context.Canceled, context.DeadlineExceeded, errors.New("boom"), &pgconn.PgError{Code: "23505"},
		fmt.Errorf("wrapped: %w", &study.Error{Kind: study.KindInvalid, Msg: "bad"}),
	} {
		if collect.IsUnavailable(err) {
			t.Errorf("%v counted as unavailable", err)
		}
	}
}
