package dbmigrate_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/internal/pgtest"
)

// withParam returns dbURL with one more query parameter.
func withParam(t *testing.T, dbURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// The README sizes the app's pool with pool_max_conns in DATABASE_URL.
// The migrations connect without a pool; before they dropped pgxpool's
// parameters, PostgreSQL refused the connection ("unrecognized
// configuration parameter pool_max_conns") and the server stopped at start.
func TestUpWithPoolParams(t *testing.T) {
	t.Parallel()
	dbURL := withParam(t, withParam(t, pgtest.EmptyDB(t), "pool_max_conns", "3"), "pool_min_conns", "1")
	ctx := context.Background()
	if err := dbmigrate.Up(ctx, dbURL); err != nil {
		t.Fatalf("up with pool parameters: %v", err)
	}
	if v, dirty, err := dbmigrate.Version(ctx, dbURL); err != nil || dirty || v == 0 {
		t.Fatalf("version with pool parameters: %d dirty %v err %v", v, dirty, err)
	}
	if err := dbmigrate.Down(ctx, dbURL); err != nil {
		t.Fatalf("down with pool parameters: %v", err)
	}
}
