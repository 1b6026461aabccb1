package dbmigrate_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/dbmigrate"
)

// Migration 000009 moves a participant's progress onto its row: answered
// counts its answers and open_question names the question it held
// (questions.answered_at IS NULL before). Down puts answered_at back from
// the answers.
func TestCollectionPathMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, conn := migratedTo(t, 8)
	// p1 answered q1 and q2 and holds q3; p2 answered q4; p3 holds q5;
	// p4 was never asked.
	_, err := conn.Exec(ctx, `
		INSERT INTO studies (slug, title, questions_per_participant, status) VALUES ('s', 'S', 10, 'open');
		INSERT INTO participants (public_id, study_id, token_hash)
			SELECT 'p' || i, 1, decode(md5('t' || i), 'hex') FROM generate_series(1, 4) i;
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at, answered_at) VALUES
			('q1', 1, 1, 0, 1, 2, 'random', '2026-01-01 10:00', '2026-01-01 10:01'),
			('q2', 1, 1, 1, 2, 3, 'random', '2026-01-01 10:02', '2026-01-01 10:03'),
			('q3', 1, 1, 2, 3, 4, 'random', '2026-01-01 10:04', NULL),
			('q4', 1, 2, 0, 1, 2, 'random', '2026-01-01 10:00', '2026-01-01 10:05'),
			('q5', 1, 3, 0, 1, 2, 'random', '2026-01-01 10:00', NULL);
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, answered_at) VALUES
			('q1', 1, 1, 0, 1, 2, '2026-01-01 10:01'),
			('q2', 1, 1, 1, 3, 2, '2026-01-01 10:03'),
			('q4', 1, 2, 0, 2, 1, '2026-01-01 10:05');`)
	if err != nil {
		t.Fatal(err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	type progress struct {
		answered int
		open     *string
	}
	want := map[string]progress{"p1": {2, ptr("q3")}, "p2": {1, nil}, "p3": {0, ptr("q5")}, "p4": {0, nil}}
	rows, err := conn.Query(ctx, `SELECT public_id, answered, open_question FROM participants`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]progress{}
	for rows.Next() {
		var id string
		var p progress
		if err := rows.Scan(&id, &p.answered, &p.open); err != nil {
			t.Fatal(err)
		}
		got[id] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, w := range want {
		g := got[id]
		if g.answered != w.answered || (g.open == nil) != (w.open == nil) || g.open != nil && *g.open != *w.open {
			t.Errorf("%s after up: answered %d open %v, want %d %v", id, g.answered, deref(g.open), w.answered, deref(w.open))
		}
	}
	if tableExists(t, url, "questions_one_open") || !tableExists(t, url, "design_pool") || !tableExists(t, url, "design_inbox") {
		t.Error("after up: questions_one_open should be gone, design_pool and design_inbox there")
	}
	if err := dbmigrate.MigrateTo(ctx, url, 8); err != nil {
		t.Fatal(err)
	}
	var open, answered int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE answered_at IS NULL),
		count(*) FILTER (WHERE answered_at = (SELECT a.answered_at FROM answers a WHERE a.question_id = q.id)) FROM questions q`).
		Scan(&open, &answered); err != nil {
		t.Fatal(err)
	}
	if open != 2 || answered != 3 {
		t.Errorf("after down: %d open questions and %d answered at their answers' time, want 2 and 3", open, answered)
	}
	if !tableExists(t, url, "questions_one_open") {
		t.Error("after down: questions_one_open is missing")
	}
}

func ptr(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return "<none>"
	}
	return *p
}
