package purge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/purge"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

func newStore(t *testing.T) (*pgxpool.Pool, *collect.Store) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	collect.RegisterDesigns(s)
	return pool, s
}

// fill creates an open study of two landmark arms for each slug, each with
// a row in every table that holds a study's rows: images, participants
// (one excluded) and their counts per arm, answered questions with their
// votes and design events, open questions holding leases, the arms'
// design states and pools, an answer waiting for the design's writer,
// dashboard settings and a finished recompute run.
func fill(t *testing.T, pool *pgxpool.Pool, s *collect.Store, slugs ...string) []study.Study {
	t.Helper()
	ctx := context.Background()
	var sts []study.Study
	for _, slug := range slugs {
		sts = append(sts, fillOne(t, pool, s, slug))
	}
	// The answers recorded by their designs, and in each study one its
	// design has not recorded yet (the writer records each shortly after
	// the answer's request returns; this one as if its process stopped in
	// between).
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if _, err := pool.Exec(ctx, `INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther)
			SELECT study_id, participant_id, anchor, closer, farther FROM answers WHERE study_id = $1 LIMIT 1`, st.ID); err != nil {
			t.Fatal(err)
		}
		// Its people (issue 30): a role, a token naming it, an invitation.
		if _, err := pool.Exec(ctx, `
			WITH a AS (INSERT INTO admins (email, password_hash) VALUES ('owner-' || $1::bigint::text || '@example.org', 'x') RETURNING id),
			r AS (INSERT INTO study_roles (study_id, admin_id, role) SELECT $1::bigint, id, 'owner' FROM a),
			t AS (INSERT INTO api_tokens (admin_id, name, token_hash, all_studies) SELECT id, 'script', ('\x' || md5($1::bigint::text))::bytea, false FROM a RETURNING id),
			ts AS (INSERT INTO api_token_studies (token_id, study_id) SELECT id, $1::bigint FROM t)
			INSERT INTO invitations (token_hash, email, study_id, role, expires_at)
			VALUES (('\x' || md5('invite' || $1::bigint::text))::bytea, 'guest@example.org', $1::bigint, 'viewer', now() + interval '1 day')`, st.ID); err != nil {
			t.Fatal(err)
		}
	}
	return sts
}

// fillOne makes study slug with rows in every table (fill).
func fillOne(t *testing.T, pool *pgxpool.Pool, s *collect.Store, slug string) study.Study { //nolint:unparam // same signature as the other fixture helpers
	t.Helper()
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: 6,
		Status: study.StatusOpen, Quality: study.QualityControl{CatchAt: []int{2}},
		Arms: []study.Arm{
			{Name: "a", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 3, Landmarks: 3}, Share: 0.5},
			{Name: "b", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 4, Landmarks: 3}, Share: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:9]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	// Catch trials (trial_answers), the first of them a gold triplet.
	if err := s.SetGoldTriplets(ctx, st.ID, []study.GoldTriplet{{Line: 2, Anchor: 0, Closer: 1, Farther: 2}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("worker-", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			q := pr.Question
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Next(ctx, p.ID); err != nil { // left open: a lease
			t.Fatal(err)
		}
		if i == 0 {
			if err := s.SetExcluded(ctx, st.ID, p.PublicID, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.SaveUploadReport(ctx, st.ID, study.UploadReport{Added: 9}); err != nil {
		t.Fatal(err)
	}
	rs := study.DefaultRecomputeSettings()
	rs.MinNewAnswers = 5
	if err := s.SetRecomputeSettings(ctx, st.ID, rs); err != nil {
		t.Fatal(err)
	}
	run, err := s.StartRun(ctx, st.ID, 0, 12, 9, map[string]string{"method": "tste"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, run, study.RunOutcome{Status: study.RunDone, Result: []byte("result")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStudyCosts(ctx, st.ID, study.Costs{PayPerHour: 12, Currency: "GBP", SecondsPerQuestion: 6}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEstimate(ctx, st.ID, store.StoredEstimate{Assumed: []byte(`{"items": 12}`), Error: "not run"}); err != nil {
		t.Fatal(err)
	}
	return st
}

// studyTables lists every table of the schema with a study_id column: the
// tables that hold a study's rows, found in the catalog so that a table
// added later is checked without editing this test.
func studyTables(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT table_name::text FROM information_schema.columns
		WHERE table_schema = 'public' AND column_name = 'study_id' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("only %d tables with a study_id column: %v", len(names), names)
	}
	return names
}

// rowsOf counts the study's rows in every table (studies: its own row).
func rowsOf(t *testing.T, pool *pgxpool.Pool, studyID int64) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for _, table := range append(studyTables(t, pool), "studies") {
		col := "study_id"
		if table == "studies" {
			col = "id"
		}
		var n int
		if err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s = $1`, table, col), studyID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// forbidCascades makes every delete that a foreign key's ON DELETE CASCADE
// sets off fail (a cascade runs its delete one trigger level down): the
// purge must have emptied each table itself, in an order where nothing
// referencing a row remains when the row goes, or its batches turn into
// the row-by-row cascade it replaces.
func forbidCascades(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		CREATE FUNCTION forbid_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF pg_trigger_depth() > 1 THEN
				RAISE EXCEPTION 'a cascade deleted a row of %', TG_TABLE_NAME;
			END IF;
			RETURN OLD;
		END $$`); err != nil {
		t.Fatal(err)
	}
	for _, table := range studyTables(t, pool) {
		if _, err := pool.Exec(ctx, fmt.Sprintf(
			`CREATE TRIGGER forbid_cascade BEFORE DELETE ON %s FOR EACH ROW EXECUTE FUNCTION forbid_cascade()`, table)); err != nil {
			t.Fatal(err)
		}
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// The purge deletes every row of the deleted study in every table, by its
// own batches (no cascade), and nothing of the other study.
func TestPurgeDeletesEveryRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, s := newStore(t)
	sts := fill(t, pool, s, "doomed", "kept")
	doomed, kept := sts[0], sts[1]
	forbidCascades(t, pool)
	before, keptBefore := rowsOf(t, pool, doomed.ID), rowsOf(t, pool, kept.ID)
	for table, n := range before {
		if n == 0 {
			t.Fatalf("the fixture has no row in %s: fill must cover every table that holds a study's rows", table)
		}
	}
	if err := s.MarkStudyDeleted(ctx, doomed.ID); err != nil {
		t.Fatal(err)
	}
	rep, err := purge.Study(ctx, s.Store, doomed.ID, 2) // tiny batches: most tables take several
	if err != nil {
		t.Fatal(err)
	}
	if after := rowsOf(t, pool, doomed.ID); total(after) != 0 {
		t.Fatalf("rows left after the purge: %v", after)
	}
	// The worker's sweep may record the kept study's pending answer (its
	// inbox row) meanwhile, as a restarted server does: that is not the
	// purge touching it, and the answer is recorded once (design_events).
	keptAfter := rowsOf(t, pool, kept.ID)
	delete(keptAfter, "design_inbox")
	delete(keptBefore, "design_inbox")
	if !maps.Equal(keptAfter, keptBefore) {
		t.Fatalf("the other study changed: %v, was %v", keptAfter, keptBefore)
	}
	if _, err := s.StudyByID(ctx, kept.ID); err != nil {
		t.Fatal(err)
	}
	for table, n := range before {
		if table != "studies" && rep.Tables[table].Rows != int64(n) {
			t.Errorf("%s: the report says %d rows deleted, the study had %d", table, rep.Tables[table].Rows, n)
		}
	}
	if !rep.StudyDeleted || rep.Batches <= len(store.PurgeTables())+1 || rep.Longest <= 0 {
		t.Errorf("report: %+v", rep)
	}
	// Again: the study is gone, which is done.
	if rep, err := purge.Study(ctx, s.Store, doomed.ID, 2); err != nil || rep.StudyDeleted || rep.Batches != 0 {
		t.Fatalf("second purge: %+v %v", rep, err)
	}
}

// A purge stopped half way (some batches, then a crash) completes when run
// again, and deletes nothing of the other study.
func TestPurgeResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, s := newStore(t)
	sts := fill(t, pool, s, "doomed", "kept")
	doomed, kept := sts[0], sts[1]
	forbidCascades(t, pool)
	before, keptBefore := rowsOf(t, pool, doomed.ID), rowsOf(t, pool, kept.ID)
	if err := s.MarkStudyDeleted(ctx, doomed.ID); err != nil {
		t.Fatal(err)
	}
	// The first run got through the gold triplets, the images and the
	// leases and deleted one batch of answers, then its process died.
	for _, b := range []struct {
		table string
		batch int
	}{{"gold_triplets", 1000}, {"items", 2000}, {"design_leases", 1000}, {"answers", 5}} { // items: 2000/200 rows
		if _, _, err := s.PurgeStudyBatch(ctx, doomed.ID, b.table, b.batch); err != nil {
			t.Fatal(err)
		}
	}
	mid := rowsOf(t, pool, doomed.ID)
	if mid["items"] != 0 || mid["design_leases"] != 0 || mid["answers"] != before["answers"]-5 || mid["questions"] != before["questions"] {
		t.Fatalf("half way: %v (before %v)", mid, before)
	}
	// A run whose context ends stops with an error and keeps its batches.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := purge.Study(cctx, s.Store, doomed.ID, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled purge: %v", err)
	}
	// The retry completes.
	if _, err := purge.Study(ctx, s.Store, doomed.ID, 3); err != nil {
		t.Fatal(err)
	}
	if after := rowsOf(t, pool, doomed.ID); total(after) != 0 {
		t.Fatalf("rows left after the retry: %v", after)
	}
	// The worker's sweep may record the kept study's pending answer (its
	// inbox row) meanwhile, as a restarted server does: that is not the
	// purge touching it, and the answer is recorded once (design_events).
	keptAfter := rowsOf(t, pool, kept.ID)
	delete(keptAfter, "design_inbox")
	delete(keptBefore, "design_inbox")
	if !maps.Equal(keptAfter, keptBefore) {
		t.Fatalf("the other study changed: %v, was %v", keptAfter, keptBefore)
	}
}

// Neither the purge nor one batch deletes anything of a study that is not
// marked deleted.
func TestPurgeRefusesLiveStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, s := newStore(t)
	live := fill(t, pool, s, "live")[0]
	before := rowsOf(t, pool, live.ID)
	if _, err := purge.Study(ctx, s.Store, live.ID, 10); !errors.Is(err, purge.ErrNotMarked) {
		t.Fatalf("purge of a live study: %v", err)
	}
	for _, table := range store.PurgeTables() {
		if n, _, err := s.PurgeStudyBatch(ctx, live.ID, table, 10); err != nil || n != 0 {
			t.Fatalf("a batch of %s of a live study deleted %d rows (%v)", table, n, err)
		}
	}
	if ok, err := s.DeletePurgedStudy(ctx, live.ID); err != nil || ok {
		t.Fatalf("delete purged study of a live study: %v %v", ok, err)
	}
	if after := rowsOf(t, pool, live.ID); !maps.Equal(after, before) {
		t.Fatalf("a live study changed: %v, was %v", after, before)
	}
}

// Through River: a worker replica's client runs the purge a web replica
// enqueued (once, however often it was asked), and its periodic scan
// purges a study marked deleted whose job was never enqueued.
func TestPurgeJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, s := newStore(t)
	sts := fill(t, pool, s, "enqueued", "lost", "kept")
	enqueued, lost, kept := sts[0], sts[1], sts[2]
	keptBefore := rowsOf(t, pool, kept.ID)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	web, err := recompute.New(pool, s, recompute.Config{}, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []study.Study{enqueued, lost} {
		if err := s.MarkStudyDeleted(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
	}
	q := purge.NewEnqueuer(web)
	for range 2 {
		if err := q.Enqueue(ctx, enqueued.ID); err != nil {
			t.Fatal(err)
		}
	}
	var jobs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, purge.Args{}.Kind()).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("%d purge jobs enqueued (%v), want 1", jobs, err)
	}

	worker, err := recompute.New(pool, s, recompute.Config{Work: true, ScanEvery: time.Hour,
		Register: []func(*river.Workers, *river.Config){purge.Register(s.Store, purge.Config{BatchRows: 4, ScanEvery: time.Hour}, log)}}, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Stop(context.Background()) })
	deadline := time.Now().Add(90 * time.Second)
	for {
		a, b := rowsOf(t, pool, enqueued.ID), rowsOf(t, pool, lost.ID)
		if total(a)+total(b) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not purged within 90 s: enqueued %v, lost %v", a, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The worker's sweep may record the kept study's pending answer (its
	// inbox row) meanwhile, as a restarted server does: that is not the
	// purge touching it, and the answer is recorded once (design_events).
	keptAfter := rowsOf(t, pool, kept.ID)
	delete(keptAfter, "design_inbox")
	delete(keptBefore, "design_inbox")
	if !maps.Equal(keptAfter, keptBefore) {
		t.Fatalf("the other study changed: %v, was %v", keptAfter, keptBefore)
	}
}
