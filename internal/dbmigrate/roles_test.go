package dbmigrate_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/dbmigrate"
)

// Migrations 000030 and 000031 (issue 30): 000030 makes every existing admin a site administrator, so an
// installation keeps working as before; accounts added later are
// researchers unless made otherwise, and roles go with their study.
func TestRolesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, conn := migratedTo(t, 27)
	if _, err := conn.Exec(ctx, `
		INSERT INTO admins (email, password_hash) VALUES ('a@example.org', 'x'), ('b@example.org', 'y');
		INSERT INTO studies (slug, title, questions_per_participant, status) VALUES ('s', 'S', 10, 'open');
		INSERT INTO api_tokens (admin_id, name, token_hash) VALUES (1, 'script', '\x01');`); err != nil {
		t.Fatal(err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	var site, all int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE site_admin), count(*) FROM admins`).Scan(&site, &all); err != nil {
		t.Fatal(err)
	}
	if site != 2 || all != 2 {
		t.Fatalf("%d of %d admins are site administrators after the migration, want every one", site, all)
	}
	// Migration 000031: a token made before keeps everything its account may do.
	var full bool
	if err := conn.QueryRow(ctx, `SELECT all_studies AND can_read AND can_identify AND can_write FROM api_tokens`).Scan(&full); err != nil || !full {
		t.Fatalf("an existing token's scope after the migration: full %t, %v", full, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO admins (email, password_hash) VALUES ('c@example.org', 'z');
		INSERT INTO study_roles (study_id, admin_id, role) VALUES (1, 3, 'viewer')`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM admins WHERE site_admin`).Scan(&site); err != nil || site != 2 {
		t.Fatalf("a new account is a site administrator by default: %d, %v", site, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO study_roles (study_id, admin_id, role) VALUES (1, 1, 'admin')`); err == nil {
		t.Fatal("a role that is not owner, editor or viewer was stored")
	}
	if _, err := conn.Exec(ctx, `DELETE FROM studies`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM study_roles`).Scan(&all); err != nil || all != 0 {
		t.Fatalf("roles outlive their study: %d, %v", all, err)
	}
}
