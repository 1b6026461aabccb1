package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
)

// limitedPool is a pool of at most maxConns connections to dbURL, set up
// as cmd/web sets up its pool (collect.ConfigurePool).
func limitedPool(t *testing.T, dbURL string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = maxConns
	collect.ConfigurePool(pcfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// outcome is what a request got.
type outcome struct {
	path       string
	status     int
	retryAfter string
	body       string
}

func (a *app) outcome(method, path string, header map[string]string) outcome { //nolint:unparam // the method is named at the call
	res := a.do(http.DefaultClient, method, path, nil, header)
	return outcome{path: path, status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), body: res.body}
}

// A full pool sheds load: while both pool connections are held by
// requests stuck behind a lock, the other requests get 503 with Retry-After
// at once rather than queueing until their timeout, both when the slots
// for requests run out (the rest wait only QueueWait) and when the pool
// does (a request in a slot waits only AcquireTimeout for a connection);
// /healthz then says 503 too, and static files still come. When the lock
// goes, the requests it held finish and everything works again.
func TestShedsLoadWhenThePoolIsFull(t *testing.T) {
	t.Parallel()
	const n = 12                 // requests at once
	for _, c := range []struct { //nolint:paralleltest // subtests fill one small pool in turn
		name    string
		cfg     web.Config
		waiting int // requests that wait for the lock or a connection
	}{
		// Four slots: two requests hold the connections, two wait for
		// one (for longer than the test), the other eight are shed.
		{"slots", web.Config{MaxDBRequests: 4, QueueWait: 100 * time.Millisecond, AcquireTimeout: 10 * time.Minute}, 4},
		// A slot for everyone: all but the two holding the connections
		// give up waiting for one.
		{"acquire timeout", web.Config{MaxDBRequests: 64, AcquireTimeout: 200 * time.Millisecond}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, dbURL := pgtest.NewDB(t)
			pool := limitedPool(t, dbURL, 2)
			c.cfg.Timeout = 10 * time.Minute // no answer may come from the route's timeout
			a, logs := newAppOn(t, pool, c.cfg)
			a.study("busy", 3, 5, "open")
			token := a.join("busy", "").Token

			ctx := context.Background()
			locker, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer locker.Close(ctx)
			tx, err := locker.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `LOCK TABLE studies IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}

			// Every request reads the study first, so two of them take
			// the pool's two connections and wait for the lock.
			results := make(chan outcome, n)
			for i := range n {
				path, header := "/s/busy", map[string]string(nil)
				if i%2 == 1 {
					path, header = "/api/v1/studies/busy/next", map[string]string{"Authorization": "Bearer " + token}
				}
				go func() { results <- a.outcome("GET", path, header) }()
			}
			// receive waits for one result; the guard only keeps a broken
			// build from hanging (without shedding, requests wait for the
			// lock).
			receive := func(what string) outcome {
				t.Helper()
				select {
				case o := <-results:
					return o
				case <-time.After(time.Minute):
					t.Fatalf("%s: no answer while the lock is held: requests queue instead of being shed", what)
					return outcome{}
				}
			}
			for range n - c.waiting {
				o := receive("shed request")
				if o.status != http.StatusServiceUnavailable || o.retryAfter == "" {
					t.Errorf("%s while the pool is full: %d, Retry-After %q, want 503 with Retry-After: %.200s", o.path, o.status, o.retryAfter, o.body)
				}
				if strings.HasPrefix(o.path, "/api/") && !isJSONError(o.body) {
					t.Errorf("%s: 503 without a JSON error: %.200s", o.path, o.body)
				}
			}
			if c.cfg.AcquireTimeout < time.Minute {
				if o := a.outcome("GET", "/healthz", nil); o.status != http.StatusServiceUnavailable || o.retryAfter == "" {
					t.Errorf("/healthz while the pool is full: %d, Retry-After %q", o.status, o.retryAfter)
				}
			}
			if o := a.outcome("GET", "/static/style.css", nil); o.status != http.StatusOK {
				t.Errorf("a static file while the pool is full: %d", o.status)
			}
			select {
			case o := <-results:
				t.Fatalf("%s answered %d while the lock is still held", o.path, o.status)
			default:
			}

			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			for range c.waiting {
				if o := receive("waiting request"); o.status != http.StatusOK {
					t.Errorf("%s once the lock is gone: %d: %.200s", o.path, o.status, o.body)
				}
			}
			for _, path := range []string{"/healthz", "/s/busy", "/api/v1/studies/busy/next"} {
				if o := a.outcome("GET", path, map[string]string{"Authorization": "Bearer " + token}); o.status != http.StatusOK {
					t.Errorf("%s after the load: %d: %.200s", path, o.status, o.body)
				}
			}
			if l := logs.lines("ERROR"); len(l) > 0 {
				t.Errorf("errors logged: %s", l)
			}
		})
	}
}

// isJSONError reports whether body is {"error": "..."}.
func isJSONError(body string) bool {
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal([]byte(body), &e) == nil && e.Error != ""
}

// unavailableChecks sends what every kind of client sends and checks that
// each gets 503 with Retry-After in its own format, and no 500.
func unavailableChecks(t *testing.T, a *app, when string, session *http.Cookie) {
	t.Helper()
	bearer := map[string]string{"Authorization": "Bearer some-participant-token"}
	checks := []struct {
		method, path string
		header       map[string]string
		form         url.Values
		format       string // text, json or html
	}{
		{"GET", "/healthz", nil, nil, "text"},
		{"GET", "/api/v1/studies/s/next", bearer, nil, "json"},
		{"POST", "/api/v1/answers", bearer, nil, "json"},
		{"POST", "/api/v1/studies/s/participants", nil, nil, "json"},
		{"GET", "/s/s", nil, nil, "html"},
		{"POST", "/s/s/start", nil, url.Values{}, "html"},
		{"GET", "/admin", map[string]string{"Cookie": session.String()}, nil, "html"},
		{"POST", "/admin/login", nil, url.Values{"email": {"r@example.org"}, "password": {"secret-password"}}, "html"},
		{"GET", "/img/" + strings.Repeat("ab", 32), nil, nil, "html"},
	}
	for _, c := range checks {
		res := a.do(a.client(), c.method, c.path, c.form, c.header)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %s %s: %d, Retry-After %q, want 503 with Retry-After: %.300s", when, c.method, c.path,
				res.StatusCode, res.Header.Get("Retry-After"), res.body)
			continue
		}
		ct := res.Header.Get("Content-Type")
		switch c.format {
		case "json":
			if !strings.HasPrefix(ct, "application/json") || !isJSONError(res.body) {
				t.Errorf("%s: %s %s: 503 as %s: %.200s", when, c.method, c.path, ct, res.body)
			}
		case "html":
			if !strings.HasPrefix(ct, "text/html") || !strings.Contains(res.body, "try again") {
				t.Errorf("%s: %s %s: 503 as %s: %.200s", when, c.method, c.path, ct, res.body)
			}
		case "text":
			if !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("%s: %s %s: 503 as %s", when, c.method, c.path, ct)
			}
		}
	}
}

// A database nobody listens for: every route that needs it says 503 with
// Retry-After (JSON for the API, a page for browsers, text for /healthz),
// and nothing is logged as an error.
func TestDatabaseUnreachableIs503(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	pool := limitedPool(t, "postgres://postgres@"+closed+"/closer?sslmode=disable&connect_timeout=5", 4)
	a, logs := newAppOn(t, pool, web.Config{})
	unavailableChecks(t, a, "nobody listening", &http.Cookie{Name: "closer_session", Value: "whatever"})
	if l := logs.lines("ERROR"); len(l) > 0 {
		t.Errorf("errors logged: %s", l)
	}
	if len(logs.lines("WARN")) == 0 {
		t.Error("the outage was not logged as a warning")
	}
}

// A database that drops every connection and refuses new ones (as during a
// restart): 503 with Retry-After everywhere while it lasts, and the app
// works again, with nothing lost, once connections are allowed again.
func TestDatabaseRestartIs503ThenRecovers(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.NewDB(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	adminURL := os.Getenv("TEST_DATABASE_URL")
	if adminURL == "" {
		adminURL = pgtest.DefaultURL
	}
	ctx := context.Background()
	server, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatal(err)
	}
	allow := func(on bool) error {
		_, err := server.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS %t`, pgx.Identifier{dbName}.Sanitize(), on))
		return err
	}
	t.Cleanup(func() {
		if err := allow(true); err != nil {
			t.Error(err)
		}
		server.Close(ctx)
	})

	pool := limitedPool(t, dbURL, 2)
	a, logs := newAppOn(t, pool, web.Config{})
	a.study("s", 3, 5, "open")
	browser := a.admin()
	base, _ := url.Parse(a.srv.URL)
	var session *http.Cookie
	for _, c := range browser.Jar.Cookies(base) {
		if c.Name == "closer_session" {
			session = c
		}
	}
	j := a.join("s", "")
	var n nextResp
	if res := a.api("GET", "/api/v1/studies/s/next", j.Token, "", &n); res.StatusCode != http.StatusOK {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}

	if err := allow(false); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, dbName); err != nil {
		t.Fatal(err)
	}
	unavailableChecks(t, a, "connections dropped and refused", session)
	answer := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
	if res := a.api("POST", "/api/v1/answers", j.Token, answer, nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("an answer during the outage: %d %s", res.StatusCode, res.body)
	}

	if err := allow(true); err != nil {
		t.Fatal(err)
	}
	if res := a.do(http.DefaultClient, "GET", "/healthz", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz after the outage: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/answers", j.Token, answer, nil); res.StatusCode != http.StatusCreated {
		t.Errorf("the answer again after the outage: %d %s", res.StatusCode, res.body)
	}
	if res := a.do(browser, "GET", "/admin", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("/admin after the outage: %d", res.StatusCode)
	}
	if got := a.count(`SELECT count(*) FROM answers`); got != 1 {
		t.Errorf("%d answers stored, want 1", got)
	}
	if l := logs.lines("ERROR"); len(l) > 0 {
		t.Errorf("errors logged: %s", l)
	}
}
