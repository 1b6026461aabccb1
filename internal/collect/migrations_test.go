package collect_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/internal/pgtest"
)

var ourTables = []string{"admins", "sessions", "api_tokens", "studies", "items", "participants", "questions", "answers", "votes"}

func tablesPresent(t *testing.T, url string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ANY($1)`, ourTables).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The migrations apply on an empty database, revert completely, and apply again.
func TestMigrationsUpDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDB(t)
	if n := tablesPresent(t, url); n != 0 {
		t.Fatalf("empty database has %d tables", n)
	}
	for round := 0; round < 2; round++ {
		if err := dbmigrate.Up(ctx, url); err != nil {
			t.Fatalf("up: %v", err)
		}
		if n := tablesPresent(t, url); n != len(ourTables) {
			t.Fatalf("after up: %d of %d tables", n, len(ourTables))
		}
		if err := dbmigrate.Up(ctx, url); err != nil {
			t.Fatalf("up twice: %v", err)
		}
		if err := dbmigrate.Down(ctx, url); err != nil {
			t.Fatalf("down: %v", err)
		}
		if n := tablesPresent(t, url); n != 0 {
			t.Fatalf("after down: %d tables left", n)
		}
	}
}
