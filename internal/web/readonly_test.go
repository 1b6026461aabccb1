package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
)

// A database that takes no writes (default_transaction_read_only, as on a
// standby) is unavailable, not broken: answers, questions and new
// participants get 503 with Retry-After, /healthz says 503 with the
// reason (a write probe, not a ping), nothing is acknowledged without
// being stored, and all works again once writes are allowed.
func TestReadOnlyDatabaseIs503(t *testing.T) {
	t.Parallel()
	pool, dbURL := pgtest.NewDB(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	ctx := context.Background()
	a, logs := newAppOn(t, pool, web.Config{})
	a.study("s", 4, 5, "open")
	asked := a.join("s", "")
	fresh := a.join("s", "") // has no question yet: next must write one
	var n nextResp
	if res := a.api("GET", "/api/v1/studies/s/next", asked.Token, "", &n); res.StatusCode != http.StatusOK {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}

	readOnly := func(on bool) {
		t.Helper()
		// READ WRITE explicitly: once on, the pool's sessions are read-only.
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		q := `ALTER DATABASE ` + db + ` RESET default_transaction_read_only`
		if on {
			q = `ALTER DATABASE ` + db + ` SET default_transaction_read_only = on`
		}
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		pool.Reset() // the setting applies to new sessions
	}
	readOnly(true)
	t.Cleanup(func() { readOnly(false) })

	answer := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
	for _, c := range []struct{ method, path, token, body string }{
		{"POST", "/api/v1/answers", asked.Token, answer},
		{"GET", "/api/v1/studies/s/next", fresh.Token, ""},
		{"POST", "/api/v1/studies/s/participants", "", ""},
	} {
		res := a.api(c.method, c.path, c.token, c.body, nil)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !isJSONError(res.body) {
			t.Errorf("read-only: %s %s: %d, Retry-After %q: %.300s; want 503 with Retry-After", c.method, c.path,
				res.StatusCode, res.Header.Get("Retry-After"), res.body)
		}
	}
	res := a.do(http.DefaultClient, "GET", "/healthz", nil, nil)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(res.body, "read-only") {
		t.Errorf("read-only: /healthz: %d, Retry-After %q: %q; want 503 with Retry-After and the reason", res.StatusCode,
			res.Header.Get("Retry-After"), res.body)
	}
	if got := a.count(`SELECT count(*) FROM answers`); got != 0 {
		t.Errorf("%d answers stored while read-only, none acknowledged", got)
	}

	readOnly(false)
	if res := a.do(http.DefaultClient, "GET", "/healthz", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz once writable: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/answers", asked.Token, answer, nil); res.StatusCode != http.StatusCreated {
		t.Errorf("the answer again once writable: %d %s", res.StatusCode, res.body)
	}
	if got := a.count(`SELECT count(*) FROM answers`); got != 1 {
		t.Errorf("%d answers stored, want 1", got)
	}
	if l := logs.lines("ERROR"); len(l) > 0 {
		t.Errorf("errors logged: %s", l)
	}
}
