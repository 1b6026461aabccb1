package dbmigrate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/internal/pgtest"
)

// Migration 000010 gives each external id one participant per study to
// resume. Studies from before may hold several participants with one id:
// the one that completed keeps the id as its key, else the one with the
// most answers, else the first; the others keep their external_id. Down
// drops the key and the tokens table.
func TestExternalIDsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, conn := migratedTo(t, 9)
	// Study 1: "dup" three times, the second completed; "most" twice, the
	// second with more answers; "tie" twice with no answers; "once" once;
	// p9 has no id. Study 2: "dup" once more.
	_, err := conn.Exec(ctx, `
		INSERT INTO studies (slug, title, questions_per_participant, status) VALUES ('s', 'S', 10, 'open'), ('t', 'T', 10, 'open');
		INSERT INTO participants (public_id, study_id, token_hash, external_id, completed_at, answered) VALUES
			('p1', 1, '\x01', 'dup', NULL, 5),
			('p2', 1, '\x02', 'dup', '2026-01-01', 3),
			('p3', 1, '\x03', 'dup', NULL, 9),
			('p4', 1, '\x04', 'most', NULL, 1),
			('p5', 1, '\x05', 'most', NULL, 2),
			('p6', 1, '\x06', 'tie', NULL, 0),
			('p7', 1, '\x07', 'tie', NULL, 0),
			('p8', 1, '\x08', 'once', NULL, 0),
			('p9', 1, '\x09', NULL, NULL, 0),
			('p10', 2, '\x0a', 'dup', NULL, 0);`)
	if err != nil {
		t.Fatal(err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT public_id FROM participants WHERE external_key IS NOT NULL ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p2", "p5", "p6", "p8", "p10"}
	if len(keyed) != len(want) {
		t.Fatalf("after up: keys on %v, want %v", keyed, want)
	}
	for i := range want {
		if keyed[i] != want[i] {
			t.Fatalf("after up: keys on %v, want %v", keyed, want)
		}
	}
	var ids int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM participants WHERE external_id IS NOT NULL`).Scan(&ids); err != nil || ids != 9 {
		t.Errorf("after up: %d participants keep an external id, %v; want 9", ids, err)
	}
	// The key is unique within a study.
	if _, err := conn.Exec(ctx, `UPDATE participants SET external_key = 'dup' WHERE public_id = 'p1'`); err == nil {
		t.Error("after up: a second participant took the key dup in study 1")
	}
	if _, err := conn.Exec(ctx, `INSERT INTO participant_tokens (token_hash, participant_id) VALUES ('\xff', 2)`); err != nil {
		t.Fatal(err)
	}
	if err := dbmigrate.MigrateTo(ctx, url, 9); err != nil {
		t.Fatal(err)
	}
	if tableExists(t, url, "participant_tokens") || tableExists(t, url, "participants_external_key") {
		t.Error("after down: participant_tokens or its index is still there")
	}
	var cols int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_name = 'participants' AND column_name = 'external_key'`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("after down: external_key columns %d, %v; want 0", cols, err)
	}
}

// migratedTo returns an empty database migrated up to version, and a
// connection to it (closed at the test's end).
func migratedTo(t *testing.T, version uint) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.EmptyDB(t)
	ctx := context.Background()
	if err := dbmigrate.MigrateTo(ctx, url, version); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return url, conn
}
