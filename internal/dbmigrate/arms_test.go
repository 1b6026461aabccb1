package dbmigrate_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/dbmigrate"
)

// Migration 000022 keys the design tables by (study, arm): a study's
// existing design state, events, pool, lease and inbox become arm 0's and
// a second arm's rows fit beside them; studies get no arms and no held-out
// share, participants arm 0. Down drops what belongs to other arms,
// counts the held-out answers in the votes (which kept them out) and
// restores the keys, so that up applies again.
func TestArmsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, conn := migratedTo(t, 21)
	_, err := conn.Exec(ctx, `
		INSERT INTO studies (slug, title, questions_per_participant, status, design) VALUES ('s', 'S', 10, 'open', 'landmark-k1');
		INSERT INTO participants (public_id, study_id, token_hash) VALUES ('p1', 1, '\x01'), ('p2', 1, '\x02');
		INSERT INTO design_states (study_id, design, config, items, version, rev, snapshot, snapshot_version, snapshot_rev)
			VALUES (1, 'landmark-k1', '{}', 5, 1, 'r1', '\x00', 0, 'r0');
		INSERT INTO design_events (study_id, version, rev, anchor, closer, farther) VALUES (1, 1, 'r1', 0, 1, 2);
		INSERT INTO design_pool (study_id, anchor, j, k, wanted, taken, ord, band, prio) VALUES (1, 0, 1, 3, 1, 1, 0, -1, 0);
		INSERT INTO design_leases (participant_id, anchor, j, k, study_id, expires_at) VALUES (1, 0, 1, 3, 1, now());
		INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther) VALUES (1, 2, 0, 3, 1);`)
	if err != nil {
		t.Fatal(err)
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	var arms string
	var share float64
	var armSum int
	if err := conn.QueryRow(ctx, `SELECT s.arms::text, s.heldout_share,
			(SELECT sum(arm) FROM participants) + (SELECT sum(arm) FROM design_states) + (SELECT sum(arm) FROM design_events)
			+ (SELECT sum(arm) FROM design_pool) + (SELECT sum(arm) FROM design_leases) + (SELECT sum(arm) FROM design_inbox)
		FROM studies s`).Scan(&arms, &share, &armSum); err != nil {
		t.Fatal(err)
	}
	if arms != "[]" || share != 0 || armSum != 0 {
		t.Fatalf("after up: arms %s, held out %g, arms of the rows sum to %d", arms, share, armSum)
	}
	// A second arm beside arm 0, a held-out answer, and an arm count.
	_, err = conn.Exec(ctx, `
		UPDATE studies SET arms = '[{"name": "a"}, {"name": "b"}]', heldout_share = 0.1;
		UPDATE participants SET arm = 1 WHERE public_id = 'p2';
		INSERT INTO arm_counts (study_id, counts) VALUES (1, '{1,1}');
		INSERT INTO design_states (study_id, arm, design, config, items, version, rev, snapshot, snapshot_version, snapshot_rev)
			VALUES (1, 1, 'basis', '{}', 5, 1, 'r1', '\x00', 0, 'r0');
		INSERT INTO design_events (study_id, arm, version, rev, anchor, closer, farther) VALUES (1, 1, 1, 'r1', 0, 1, 2);
		INSERT INTO design_pool (study_id, arm, anchor, j, k, wanted, taken, ord, band, prio) VALUES (1, 1, 0, 1, 3, 1, 0, 0, 0, 0);
		INSERT INTO design_inbox (study_id, arm, participant_id, anchor, closer, farther) VALUES (1, 1, 2, 0, 1, 2);
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design) VALUES
			('h1', 1, 2, 4, 2, 3, 'heldout'), ('q1', 1, 1, 4, 2, 3, 'landmark-k1');
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther) VALUES
			('h1', 1, 2, 4, 3, 2), ('q1', 1, 1, 4, 2, 3);
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES (1, 4, 2, 3, 1, 0);`)
	if err != nil {
		t.Fatalf("a second arm's rows beside arm 0's: %v", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE studies SET heldout_share = 0.6`); err == nil {
		t.Error("a held-out share of 0.6 was stored")
	}
	if err := dbmigrate.MigrateTo(ctx, url, 21); err != nil {
		t.Fatal(err)
	}
	var states, events, pool, leases, inbox int
	var jc, kc int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM design_states), (SELECT count(*) FROM design_events),
			(SELECT count(*) FROM design_pool), (SELECT count(*) FROM design_leases), (SELECT count(*) FROM design_inbox),
			(SELECT j_closer FROM votes WHERE anchor = 4), (SELECT k_closer FROM votes WHERE anchor = 4)`).
		Scan(&states, &events, &pool, &leases, &inbox, &jc, &kc); err != nil {
		t.Fatal(err)
	}
	if states != 1 || events != 1 || pool != 1 || leases != 1 || inbox != 1 {
		t.Fatalf("after down: %d states, %d events, %d pool rows, %d leases, %d inbox rows; want arm 0's one each", states, events, pool, leases, inbox)
	}
	if jc != 1 || kc != 1 {
		t.Fatalf("after down: votes %d/%d on the held-out answer's comparison, want 1/1", jc, kc)
	}
	var cols int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = 'public' AND (column_name = 'arm' OR column_name IN ('arms', 'heldout_share'))`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("after down: %d arm columns left, %v", cols, err)
	}
	if tableExists(t, url, "arm_counts") {
		t.Error("after down: arm_counts is still there")
	}
	// The keys are one study's again.
	if _, err := conn.Exec(ctx, `INSERT INTO design_states (study_id, design, config, items, version, rev, snapshot, snapshot_version, snapshot_rev)
		VALUES (1, 'basis', '{}', 5, 0, 'r', '\x00', 0, 'r')`); err == nil {
		t.Error("after down: a second design state of study 1")
	}
	if err := dbmigrate.Up(ctx, url); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
