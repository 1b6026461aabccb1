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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	if err := dbmigrate.Up(context.Background(), "mysql://x"); err == nil {
		t.Fatal("accepted a mysql URL")
	}
}

// Migration 5 writes down the coordinate rule that basis studies saved
// before the setting existed ran with (the paper's median), and leaves
// other designs and explicit settings alone; down removes only what it
// could have written.
func TestBasisCoordinatesMigration(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyDB(t)
	ctx := context.Background()
	if err := dbmigrate.MigrateTo(ctx, url, 4); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO studies (slug, title, questions_per_participant, design, design_config) VALUES
		('old-basis', 'Old', 10, 'basis', '{"seed": 5, "repeats": 1}'),
		('new-basis', 'New', 10, 'basis', '{"seed": 6, "coordinates": "rank-difference"}'),
		('landmarks', 'L', 10, 'landmark-k1', '{"seed": 7, "landmarks": 3}')`)
	if err != nil {
		t.Fatal(err)
	}
	rules := func() map[string]*string {
		out := map[string]*string{}
		rows, err := conn.Query(ctx, `SELECT slug, design_config ->> 'coordinates' FROM studies`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var slug string
			var rule *string
			if err := rows.Scan(&slug, &rule); err != nil {
				t.Fatal(err)
			}
			out[slug] = rule
		}
		return out
	}
	str := func(p *string) string {
		if p == nil {
			return "<none>"
		}
		return *p
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	got := rules()
	if str(got["old-basis"]) != "median" || str(got["new-basis"]) != "rank-difference" || got["landmarks"] != nil {
		t.Fatalf("after up: old %s, new %s, landmarks %s", str(got["old-basis"]), str(got["new-basis"]), str(got["landmarks"]))
	}
	var seed int
	if err := conn.QueryRow(ctx, `SELECT (design_config ->> 'seed')::int FROM studies WHERE slug = 'old-basis'`).Scan(&seed); err != nil || seed != 5 {
		t.Fatalf("the other settings changed: seed %d, %v", seed, err)
	}
	if err := dbmigrate.MigrateTo(ctx, url, 4); err != nil {
		t.Fatal(err)
	}
	got = rules()
	if got["old-basis"] != nil || str(got["new-basis"]) != "rank-difference" {
		t.Fatalf("after down: old %s, new %s", str(got["old-basis"]), str(got["new-basis"]))
	}
}
