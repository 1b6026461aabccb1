package dbmigrate_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/internal/pgtest"
)

func tableCount(t *testing.T, url string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tableExists(t *testing.T, url, name string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestUpDownOnEmptyDatabase(t *testing.T) {
	url := pgtest.EmptyDB(t)
	ctx := context.Background()
	if v, _, err := dbmigrate.Version(ctx, url); err != nil || v != 0 {
		t.Fatalf("fresh database: version %d, %v", v, err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, url); n == 0 {
		t.Fatal("no tables after up")
	}
	if !tableExists(t, url, "river_job") || !tableExists(t, url, "studies") {
		t.Fatal("River's or closer's tables missing after up")
	}
	v, dirty, err := dbmigrate.Version(ctx, url)
	if err != nil || dirty || v == 0 {
		t.Fatalf("after up: version %d dirty %v err %v", v, dirty, err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil { // a second run is a no-op
		t.Fatalf("second up: %v", err)
	}
	if err := dbmigrate.Down(ctx, url); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, url); n != 0 {
		t.Fatalf("%d tables left after down", n)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatalf("up after down: %v", err)
	}
}

// Two replicas starting together must both succeed and leave one schema.
func TestConcurrentUp(t *testing.T) {
	url := pgtest.EmptyDB(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = dbmigrate.Up(context.Background(), url)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if v, dirty, err := dbmigrate.Version(context.Background(), url); err != nil || dirty || v == 0 {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
}

func TestBadURL(t *testing.T) {
	if err := dbmigrate.Up(context.Background(), "mysql://x"); err == nil {
		t.Fatal("accepted a mysql URL")
	}
}
