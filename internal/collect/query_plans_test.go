package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// largeTables are the tables that grow with a study's answers or
// participants: a hot query must never read one of them whole.
// (design_inbox is not one: the writer empties it within milliseconds of
// each answer.)
var largeTables = []string{"questions", "answers", "votes", "participants", "design_leases", "design_events", "design_pool", "items"}

// planFixture is a database holding one large study next to a small one,
// and the ids a request would carry.
type planFixture struct {
	large, live int64 // the large study and a small study in progress
	// Of each study: a participant with an open question, that question,
	// one of their answered questions and its comparison.
	largePart, livePart         int64
	largeOpen, liveOpen         string
	largeAnswered, liveAnswered string
	liveAnchor, liveJ, liveK    int
	livePublicID, liveSHA256    string
	liveToken                   []byte
	largeSeq, liveSeq           int64 // a recent answers.seq watermark of each study
}

// Sizes of the fixture: the large study has 50,000 participants, of whom
// 10,000 were asked 10 questions each on 2,000 items (100,000 questions;
// 90,000 answers, votes and design events; 10,000 expired leases) and the
// others left before their first question; the small study's 10
// participants were asked 10 each on 40 items (100 questions, 10 active
// leases). The planner weighs reading a table whole against looking up the
// rows a query needs, so the small study holds the share of the rows that
// a study of 2,000 answers holds next to an import of 2 million: 0.1%.
const (
	planLargeItems, planLargePeople, planLargeAsked, planLargeEach = 2000, 50000, 10000, 10
	planLiveItems, planLivePeople, planLiveAsked, planLiveEach     = 40, 10, 10, 10
)

// newPlanFixture fills a fresh database with generate_series inserts (a
// few seconds) and analyzes it.
func newPlanFixture(t *testing.T) (*pgxpool.Pool, planFixture) {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	var fx planFixture
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The rows are consistent by construction: skip the foreign-key checks
	// (half the time) where the role may (a superuser, as in pgtest's
	// default).
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err == nil {
		defer func() {
			if _, err := conn.Exec(ctx, `RESET session_replication_role`); err != nil {
				t.Error(err)
			}
		}()
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("fixture: %v\n%s", err, sql)
		}
	}
	study := func(slug string, items, people, asked, each int, start string) int64 {
		t.Helper()
		var id int64
		if err := conn.QueryRow(ctx, `
			INSERT INTO studies (slug, title, questions_per_participant, status, design)
			VALUES ($1, $1, 100, 'open', 'landmark-k1') RETURNING id`, slug).Scan(&id); err != nil {
			t.Fatal(err)
		}
		exec(`
			INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
			SELECT $1::bigint, i, 'item ' || i, 'item-' || i || '.png', 'image/png',
				md5($1::bigint || '/' || i) || md5(i || '/' || $1::bigint), 1, 1, '\x89504e47'
			FROM generate_series(0, $2::int - 1) i`, id, items)
		exec(`
			INSERT INTO participants (public_id, study_id, token_hash, external_id, created_at)
			SELECT substr(md5('p' || $1::bigint || '/' || i), 1, 26), $1::bigint, sha256(('t' || $1::bigint || '/' || i)::bytea),
				CASE WHEN i % 3 = 0 THEN 'ext-' || i END, $3::timestamptz + i * interval '1 second'
			FROM generate_series(1, $2::int) i`, id, people, start)
		// Question g of a participant compares anchor a = g + o mod n with
		// a + d and a + d + 1 + g / n (o and d vary with the participant),
		// so a participant is never asked one comparison twice (for each
		// up to 2n). The last one is open, the others answered.
		exec(`
			INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at)
			SELECT substr(md5(p.id || '/' || g), 1, 26), p.study_id, p.id,
				(g + o) % n, (g + o + d) % n, (g + o + d + 1 + g / n) % n, 'landmark-k1',
				p.created_at + g * interval '10 seconds'
			FROM (SELECT $2::int AS n, $3::int AS m) c, participants p,
				LATERAL (SELECT (p.id * 7919) % c.n AS o, 1 + (p.id * 13) % (c.n - 3) AS d) v,
				generate_series(0, c.m - 1) g
			WHERE p.study_id = $1::bigint AND p.id < (SELECT min(id) FROM participants WHERE study_id = $1::bigint) + $4::int`,
			id, items, each, asked)
		exec(`
			INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms, answered_at)
			SELECT q.id, q.study_id, q.participant_id, q.anchor, q.left_idx, q.right_idx, 300 + (hashtext(q.id) & 4095),
				q.issued_at + interval '3 seconds'
			FROM questions q JOIN participants p ON p.id = q.participant_id
			WHERE q.study_id = $1::bigint AND q.issued_at < p.created_at + ($2::int - 1) * interval '10 seconds'
			ORDER BY q.issued_at`, id, each)
		exec(`
			UPDATE participants p SET answered = $2::int - 1, open_question = q.id
			FROM questions q WHERE q.participant_id = p.id AND p.study_id = $1::bigint
				AND q.issued_at = p.created_at + ($2::int - 1) * interval '10 seconds'`, id, each)
		exec(`
			INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
			SELECT $1::bigint, anchor, least(closer, farther), greatest(closer, farther),
				count(*) FILTER (WHERE closer < farther), count(*) FILTER (WHERE closer > farther)
			FROM answers WHERE study_id = $1::bigint
			GROUP BY anchor, least(closer, farther), greatest(closer, farther)`, id)
		exec(`
			INSERT INTO design_states (study_id, design, config, items, version, rev, snapshot, snapshot_version, snapshot_rev)
			SELECT $1::bigint, 'landmark-k1', '{}', $2::int, count(*), 'r', '\x00', count(*) - count(*) % 500, 'r'
			FROM answers WHERE study_id = $1::bigint`, id, items)
		exec(`
			INSERT INTO design_events (study_id, version, rev, anchor, closer, farther, recorded_at)
			SELECT $1::bigint, row_number() OVER (ORDER BY seq), md5(question_id), anchor, closer, farther, answered_at
			FROM answers WHERE study_id = $1::bigint`, id)
		// Every open question holds a lease: the large study's expired
		// long ago, the small study's are active.
		exec(`
			INSERT INTO design_leases (participant_id, anchor, j, k, study_id, leased_at, expires_at)
			SELECT q.participant_id, q.anchor, least(q.left_idx, q.right_idx), greatest(q.left_idx, q.right_idx), q.study_id,
				q.issued_at, CASE WHEN q.issued_at > now() - interval '1 day' THEN now() ELSE q.issued_at END + interval '2 minutes'
			FROM questions q JOIN participants p ON p.open_question = q.id WHERE q.study_id = $1::bigint`, id)
		// A full window of open comparisons in the pool (a landmark design
		// of this size has far more), the leased ones taken, and a few
		// answers waiting for the writer.
		exec(`
			INSERT INTO design_pool (study_id, anchor, j, k, wanted, taken, ord, band, prio)
			SELECT $1::bigint, a, j, j + 1 + (g % 7), 1, 0, g, -1, g::bigint * 1540483477 % 2147483648
			FROM generate_series(0, $2::int - 1) g,
				LATERAL (SELECT g % ($3::int - 9) AS a, (g / ($3::int - 9)) % ($3::int - 9) AS j) x
			ON CONFLICT DO NOTHING`, id, 4096, items)
		exec(`
			INSERT INTO design_pool (study_id, anchor, j, k, wanted, taken, ord, band, prio)
			SELECT study_id, anchor, j, k, 1, count(*), 1000000, -1, 1000000::bigint * 1540483477 % 2147483648
			FROM design_leases WHERE study_id = $1::bigint GROUP BY study_id, anchor, j, k
			ON CONFLICT (study_id, arm, anchor, j, k) DO UPDATE SET taken = excluded.taken`, id)
		exec(`
			INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther)
			SELECT $1::bigint, participant_id, anchor, closer, farther FROM answers WHERE study_id = $1::bigint
			ORDER BY seq DESC LIMIT 20`, id)
		exec(`
			INSERT INTO recompute_runs (study_id, status, started_at, finished_at, answers, items)
			SELECT $1::bigint, 'done', $2::timestamptz + i * interval '1 hour', $2::timestamptz + i * interval '1 hour', i * 100, $3::int
			FROM generate_series(1, 20) i`, id, start, items)
		return id
	}
	// The large study ran months ago; the small one is running now.
	t0 := time.Now()
	fx.large = study("large", planLargeItems, planLargePeople, planLargeAsked, planLargeEach, "2026-01-01T00:00:00Z")
	liveStart := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	fx.live = study("live", planLiveItems, planLivePeople, planLiveAsked, planLiveEach, liveStart)
	exec(`ANALYZE`)
	t.Logf("fixture built in %v", time.Since(t0).Round(time.Millisecond))

	pick := func(studyID int64, part *int64, open, answered *string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `
			SELECT p.id, p.open_question, (SELECT question_id FROM answers WHERE participant_id = p.id LIMIT 1)
			FROM participants p WHERE p.study_id = $1 AND p.open_question IS NOT NULL ORDER BY p.id DESC LIMIT 1`,
			studyID).Scan(part, open, answered); err != nil {
			t.Fatal(err)
		}
	}
	pick(fx.large, &fx.largePart, &fx.largeOpen, &fx.largeAnswered)
	pick(fx.live, &fx.livePart, &fx.liveOpen, &fx.liveAnswered)
	if err := pool.QueryRow(ctx, `
		SELECT q.anchor, least(q.left_idx, q.right_idx), greatest(q.left_idx, q.right_idx), p.public_id, p.token_hash,
			(SELECT sha256 FROM items WHERE study_id = q.study_id AND idx = q.anchor)
		FROM questions q JOIN participants p ON p.id = q.participant_id WHERE q.id = $1`, fx.liveAnswered).
		Scan(&fx.liveAnchor, &fx.liveJ, &fx.liveK, &fx.livePublicID, &fx.liveToken, &fx.liveSHA256); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		study int64
		seq   *int64
	}{{fx.large, &fx.largeSeq}, {fx.live, &fx.liveSeq}} {
		if err := pool.QueryRow(ctx, `SELECT max(seq) - 10 FROM answers WHERE study_id = $1`, w.study).Scan(w.seq); err != nil {
			t.Fatal(err)
		}
	}
	return pool, fx
}

// planCase is one of the store's SQL strings with the arguments a request
// would give it.
type planCase struct {
	name string
	sql  string
	args []any
}

// hotQueries are the store's queries on the paths a large study must not
// slow down: a participant's next question and answer (in every design),
// the participant and study pages, the dashboard, exports, exclusion and the
// recompute scheduler. Queries keyed by a participant, a question or a
// watermark run against the large study too; queries that aggregate a
// whole study run against the small one (on the large study they read
// its rows by design, and must not read the other studies' rows).
// storeSQL are the store's statements by name.
var storeSQL = store.Queries()

func hotQueries(fx planFixture) []planCase {
	live, large := fx.live, fx.large
	return []planCase{
		// Next and Answer, both studies.
		{"lockParticipant/large", lockParticipantSQL, []any{fx.largePart}},
		{"lockParticipant/live", lockParticipantSQL, []any{fx.livePart}},
		{"itemsAtVersion/live", itemsAtVersionSQL, []any{live}},
		{"askedKeys/large", askedKeysSQL, []any{fx.largePart}},
		{"askedKeys/live", askedKeysSQL, []any{fx.livePart}},
		{"insertQuestion/live", insertQuestionSQL, []any{"q-new", live, fx.livePart, 0, 1, 2, "random", nil}},
		{"insertQuestion/trial", insertQuestionSQL, []any{"q-trial", live, fx.livePart, 0, 1, 2, "random", []int{2, 0, 1}}},
		{"holdQuestion/large", holdQuestionSQL, []any{fx.largePart, "q-new"}},
		{"complete/live", completeSQL, []any{fx.livePart, "CODE"}},
		{"lockAnswer/large", lockAnswerSQL, []any{fx.largeOpen}},
		{"previousAnswer/large", previousAnswerSQL, []any{fx.largeAnswered}},
		{"insertAnswer/live", insertAnswerSQL, []any{fx.liveOpen, live, fx.livePart, 0, 1, 2, 900, 1200}},
		{"insertChoices/live", insertChoicesSQL, []any{fx.liveOpen, live, fx.livePart, 0, 1, 2, 900, 1200, []int{2}}},
		{"addVote/live", addVoteSQL, []any{live, fx.liveAnchor, fx.liveJ, fx.liveK, 1, 0}},
		{"addVotes/live", addVotesSQL, []any{live, []int32{int32(fx.liveAnchor)}, []int32{int32(fx.liveJ)}, []int32{int32(fx.liveK)}, []int32{1}, []int32{0}}},
		{"inbox/live", inboxSQL, []any{live, fx.livePart, 0, 1, 2, 0}},
		{"answered/large", answeredSQL, []any{fx.largePart, "q-new", 100, "CODE"}},
		{"complete/large", completeSQL, []any{fx.largePart, "CODE"}},
		{"votes/live", votesSQL, []any{live}},
		// Stateful designs: the questions' claims and takeovers.
		{"claimBand/live", claimBandSQL, []any{live, fx.livePart, 120.0, "q-new", true, "landmark-k1", 0, spreadCap, int32(-1), int64(1 << 30)}},
		{"claimBand/large", claimBandSQL, []any{large, fx.largePart, 120.0, "q-new", true, "landmark-k1", 0, spreadCap, int32(-1), int64(1 << 30)}},
		{"claimFirst/live", claimFirstSQL, []any{live, fx.livePart, 120.0, "q-new", true, "landmark-k1", 0, spreadCap, int64(1 << 30)}},
		{"claimFirst/large", claimFirstSQL, []any{large, fx.largePart, 120.0, "q-new", false, "landmark-k1", 0, noCap, int64(0)}},
		{"claimAny/large", claimAnySQL, []any{large, fx.largePart, 120.0, "q-new", false, "landmark-k1", 0, spreadCap}},
		{"takeOver/live", takeOverSQL, []any{live, fx.livePart, 120.0, "q-new", true, "landmark-k1", 0}},
		{"takeOver/large", takeOverSQL, []any{large, fx.largePart, 120.0, "q-new", true, "landmark-k1", 0}},
		{"stateExists/large", stateExistsSQL, []any{large, 0}},
		{"poolLoad/live", poolLoadSQL, []any{live, 0}},
		{"insertActiveFallback/live", insertActiveFallbackSQL, []any{"q-new", live, fx.livePart, 0, 1, 2, 0, nil}},
		{"insertWarmup/live", insertWarmupSQL, []any{"q-new", live, fx.livePart, 0, 1, 2, 0, nil}},
		// The writer.
		{"lockDesignState/large", lockDesignStateSQL, []any{large, 0}},
		{"eventRev/large", eventRevSQL, []any{large, 0, int64(1000)}},
		{"snapshot/large", snapshotSQL, []any{large, 0}},
		{"replayEvents/large", replayEventsSQL, []any{large, 0, int64(planLargeAsked*(planLargeEach-1) - 400)}},
		{"poolRows/live", poolRowsSQL, []any{live, 0}},
		{"readInbox/live", readInboxSQL, []any{live, 0, inboxBatch}},
		{"deleteInbox", deleteInboxSQL, []any{[]int64{1, 2, 3}}},
		{"releaseLeases/live", releaseLeasesSQL, []any{live, []int64{fx.livePart}, []int32{int32(fx.liveAnchor)}, []int32{int32(fx.liveJ)}, []int32{int32(fx.liveK)}}},
		{"releaseLeases/large", releaseLeasesSQL, []any{large, []int64{fx.largePart}, []int32{5}, []int32{6}, []int32{7}}},
		{"poolRelease/large", poolReleaseSQL, []any{large, []int32{5}, []int32{6}, []int32{7}, []int32{1}, 0}},
		{"poolWrite/large", poolWriteSQL, []any{large, []int32{5}, []int32{6}, []int32{7}, []int32{1}, []int64{9}, true, 0}},
		{"poolUpdate/large", poolUpdateSQL, []any{large, []int32{5}, []int32{6}, []int32{7}, []int32{1}, []int64{9}, true, 0}},
		{"poolDrop/large", poolDropSQL, []any{large, []int32{5}, []int32{6}, []int32{7}, 0}},
		{"insertEvents/live", insertEventsSQL, []any{live, []int64{1 << 40}, []string{"rev"}, []int32{0}, []int32{1}, []int32{2}, 0}},
		{"saveSnapshot/live", saveSnapshotSQL, []any{live, int64(10), "rev", []byte("{}"), []byte{0}, 0}},
		{"advanceState/live", advanceStateSQL, []any{live, int64(10), "rev", []byte("{}"), 0}},
		{"openQuestion/large", openQuestionSQL, []any{fx.largeOpen}},
		{"designAnswerCounts/live", designAnswerCountsSQL, []any{live, study.DesignFallback, 0}},
		{"designProgress/large", designProgressSQL, []any{large, 0}},
		// Participants, exclusion, study page.
		{"participantByToken", participantByTokenSQL, []any{fx.liveToken}},
		{"applyRules/large", store.ApplyRulesSQL, []any{fx.largePart}},
		{"tookPartElsewhere/live", tookPartElsewhereSQL, []any{live, "someone"}},
		{"lockArmCounts/live", storeSQL["lockArmCounts"], []any{live}},
		{"joinArm/live", store.JoinArmSQL, []any{"new-public-id", live, []byte("new-token"), "", nil, 1}},
		{"takingPart/live", takingPartSQL, []any{live, 30, false}},
		{"takingPart/answered", takingPartSQL, []any{live, 30, true}},
		{"revokeOldTokens/live", revokeOldTokensSQL, []any{fx.livePart, MaxTokensPerParticipant - 1}},
		{"listParticipants/large", listParticipantsSQL, []any{large, 50}},
		{"listParticipants/live", listParticipantsSQL, []any{live, 50}},
		{"setExcluded/live", storeSQL["setExcluded"], []any{live, fx.livePublicID, true}},
		{"studyStats/live", storeSQL["studyStats"], []any{live}},
		{"questionsIssued/live", storeSQL["questionsIssued"], []any{live}},
		{"lockStudyForItems/live", storeSQL["lockStudyForItems"], []any{live}},
		{"itemImage", storeSQL["itemImage"], []any{fx.liveSHA256}},
		{"itemImageSize", storeSQL["itemImageSize"], []any{fx.liveSHA256}},
		{"itemImageChunk", storeSQL["itemImageChunk"], []any{fx.liveSHA256, 1, store.ImageChunkBytes}},
		{"itemsStored/live", storeSQL["itemsStored"], []any{live}},
		// Exports and recompute.
		{"itemLabels/live", storeSQL["itemLabels"], []any{live}},
		{"exportAnswers/live", storeSQL["exportAnswers"], []any{live, false, false}},
		{"exportAnswers/live/excluded", storeSQL["exportAnswers"], []any{live, true, false}},
		{"exportAnswers/live/previews", storeSQL["exportAnswers"], []any{live, false, true}},
		// Preview sessions: the study page's count and its delete button.
		{"countPreviews/live", storeSQL["countPreviews"], []any{live}},
		{"deletePreviews/live", storeSQL["deletePreviews"], []any{live}},
		{"runAnswers/live", storeSQL["runAnswers"], []any{live, false}},
		{"dueStudies", storeSQL["dueStudies"], []any{200, 600}},
		// Dashboard.
		{"dashboardVersion/live", storeSQL["dashboardVersion"], []any{live}},
		{"excludedWithAnswers/live", storeSQL["excludedWithAnswers"], []any{live}},
		{"tallyAnswers/live", storeSQL["tallyAnswers"], []any{live, store.ResponseBinCap}},
		{"tallyVotes/live", storeSQL["tallyVotes"], []any{live, 10}},
		{"tallyParticipants/live", storeSQL["tallyParticipants"], []any{live}},
		{"tallyCheck/live", storeSQL["tallyCheck"], []any{live, fx.liveSeq}},
		{"tallyNewAnswers/large", storeSQL["tallyNewAnswers"], []any{large, fx.largeSeq, store.ResponseBinCap}},
		{"tallyTouchedVotes/large", storeSQL["tallyTouchedVotes"], []any{large, []int32{5, 6}, []int32{6, 7}, []int32{7, 8}}},
		{"tallyPeople/large", storeSQL["tallyPeople"], []any{large, []int64{fx.largePart, fx.largePart - 1}}},
		{"trialCounts/live", storeSQL["trialCounts"], []any{live}},
		// Deleting a study: the mark, then the purge's batches of the
		// large study (their cascades: TestForeignKeysIndexed).
		{"markStudyDeleted/live", storeSQL["markStudyDeleted"], []any{live}},
	}
}

// listQueries are the store's queries that count every study (the studies
// list). They read every listed study's rows by design, so they may read a
// large table sequentially, but never once per study: a sequential scan
// run once per study reads the whole table as many times as there are
// studies.
func listQueries() []planCase {
	return []planCase{{"listStudies", storeSQL["listStudies"], nil}, {"pendingStudies", pendingStudiesSQL, nil}}
}

// purgeQueries are the purge's batches of the large study, one per table
// (purgeBatchSQL): each must find the study's rows through an index, or
// every batch reads the table from its start past the rows the batches
// before it deleted.
func purgeQueries(fx planFixture) []planCase {
	var cases []planCase
	batches := store.PurgeBatches()
	for _, table := range slices.Sorted(maps.Keys(batches)) {
		cases = append(cases, planCase{"purgeBatch/" + table + "/large", batches[table], []any{fx.large, 10000}})
	}
	return cases
}

// TestHotQueryPlans fills a database with a large study next to a small one
// and fails when PostgreSQL plans any hot query (hotQueries) with a
// sequential scan of a large table: such a query's time grows with the
// whole table, so one big import slows every study (issue 11: a question
// lookup without a usable index took 73-80 ms per question, and deleting
// the study never finished).
func TestHotQueryPlans(t *testing.T) {
	t.Parallel()
	pool, fx := newPlanFixture(t)
	for _, c := range append(hotQueries(fx), purgeQueries(fx)...) {
		t.Run(c.name, func(t *testing.T) {
			custom := explain(t, pool, c.sql, c.args...)
			if scans := custom.seqScans(); len(scans) > 0 {
				t.Errorf("sequential scan of %s\n%s\n%s", strings.Join(scans, ", "), c.sql, planText(t, pool, c.sql, c.args...))
			}
			t.Logf("indexes: %s", strings.Join(custom.indexes(), ", "))
			// pgx prepares the statements it runs, and after five runs
			// PostgreSQL keeps a generic plan (made without the
			// arguments) when it costs less than the custom plans did
			// plus their planning; that plan must not scan either.
			generic := explainGeneric(t, pool, c.sql)
			planning := 1000 * 0.0025 * float64(custom.relations()+1) // plancache.c, cpu_operator_cost
			if scans := generic.seqScans(); len(scans) > 0 && generic.Cost < custom.Cost+planning {
				t.Errorf("the generic plan (cost %.2f, custom %.2f) has a sequential scan of %s\n%s",
					generic.Cost, custom.Cost, strings.Join(scans, ", "), c.sql)
			}
		})
	}
	for _, c := range listQueries() { //nolint:paralleltest // subtests share one connection's session settings
		t.Run(c.name, func(t *testing.T) {
			plan := explainAnalyze(t, pool, c.sql, c.args...)
			if again := plan.repeatedSeqScans(); len(again) > 0 {
				t.Errorf("sequential scans of %s run once per row of an outer scan\n%s\n%s",
					strings.Join(again, ", "), c.sql, planText(t, pool, c.sql, c.args...))
			}
			t.Logf("scans: %s", strings.Join(plan.scans(), ", "))
		})
	}
	// The check must be able to fail: a count subquery per study (the
	// studies list did one StudyStats per study) reads the answers once
	// per study on this fixture of two studies.
	t.Run("notices a table read once per study", func(t *testing.T) { //nolint:paralleltest // subtests share one connection's session settings
		const perStudy = `SELECT id, (SELECT count(*) FROM answers a WHERE a.study_id = s.id) FROM studies s WHERE deleted_at IS NULL`
		if again := explainAnalyze(t, pool, perStudy).repeatedSeqScans(); !slices.Contains(again, "answers") {
			t.Errorf("a count per study reads the answers once in all:\n%s", planText(t, pool, perStudy))
		}
	})
	// The test must be able to fail: without the index of migration
	// 000006 the question lookup reads the whole table again.
	t.Run("notices a missing index", func(t *testing.T) { //nolint:paralleltest // subtests share one connection's session settings
		if _, err := pool.Exec(context.Background(), `DROP INDEX questions_participant`); err != nil {
			t.Fatal(err)
		}
		if scans := explain(t, pool, askedKeysSQL, fx.livePart).seqScans(); !slices.Contains(scans, "questions") {
			t.Errorf("without questions_participant askedKeys plans no sequential scan of questions:\n%s",
				planText(t, pool, askedKeysSQL, fx.livePart))
		}
	})
}

// explain returns query's plan for args.
func explain(t *testing.T, pool *pgxpool.Pool, query string, args ...any) planNode {
	t.Helper()
	var raw []byte
	if err := pool.QueryRow(context.Background(), `EXPLAIN (FORMAT JSON) `+query, args...).Scan(&raw); err != nil {
		t.Fatalf("explain: %v\n%s", err, query)
	}
	return parsePlan(t, raw)
}

// explainAnalyze runs query and returns its plan with the actual loops.
func explainAnalyze(t *testing.T, pool *pgxpool.Pool, query string, args ...any) planNode {
	t.Helper()
	var raw []byte
	if err := pool.QueryRow(context.Background(), `EXPLAIN (ANALYZE, FORMAT JSON) `+query, args...).Scan(&raw); err != nil {
		t.Fatalf("explain analyze: %v\n%s", err, query)
	}
	return parsePlan(t, raw)
}

// explainGeneric returns query's generic plan, the one PostgreSQL's plan
// cache may keep for a prepared statement.
func explainGeneric(t *testing.T, pool *pgxpool.Pool, query string) planNode {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{`SET plan_cache_mode = force_generic_plan`, `PREPARE plan_check AS ` + query} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("generic plan: %v\n%s", err, query)
		}
	}
	defer func() {
		if _, err := conn.Exec(ctx, `RESET plan_cache_mode; DEALLOCATE plan_check`); err != nil {
			t.Error(err)
		}
	}()
	var n int
	if err := conn.QueryRow(ctx, `SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = 'plan_check'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// A generic plan does not look at the arguments: NULLs will do.
	var raw []byte
	nulls := strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_check(`+nulls+`)`).Scan(&raw); err != nil {
		t.Fatalf("generic plan: %v\n%s", err, query)
	}
	return parsePlan(t, raw)
}

func parsePlan(t *testing.T, raw []byte) planNode {
	t.Helper()
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v\n%s", err, raw)
	}
	return plans[0].Plan
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Cost     float64    `json:"Total Cost"`
	Loops    float64    `json:"Actual Loops"` // with ANALYZE only
	Plans    []planNode `json:"Plans"`
}

// walk calls f on n and every node below it.
func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// seqScans returns the large tables the plan reads with a sequential scan.
func (n planNode) seqScans() []string {
	var out []string
	n.walk(func(n planNode) {
		if n.NodeType == "Seq Scan" && slices.Contains(largeTables, n.Relation) {
			out = append(out, n.Relation)
		}
	})
	return out
}

// repeatedSeqScans returns the large tables the plan read sequentially
// more than once (an analyzed plan's loops).
func (n planNode) repeatedSeqScans() []string {
	var out []string
	n.walk(func(n planNode) {
		if n.NodeType == "Seq Scan" && slices.Contains(largeTables, n.Relation) && n.Loops > 1 {
			out = append(out, n.Relation)
		}
	})
	return out
}

// scans returns the plan's scans of tables: node type, table and loops.
func (n planNode) scans() []string {
	var out []string
	n.walk(func(n planNode) {
		if n.Relation != "" {
			out = append(out, fmt.Sprintf("%s of %s ×%g", n.NodeType, n.Relation, n.Loops))
		}
	})
	return out
}

// indexes returns the indexes the plan uses.
func (n planNode) indexes() []string {
	var out []string
	n.walk(func(n planNode) {
		if n.Index != "" && !slices.Contains(out, n.Index) {
			out = append(out, n.Index)
		}
	})
	return out
}

// relations counts the plan's scans of tables.
func (n planNode) relations() int {
	c := 0
	n.walk(func(n planNode) {
		if n.Relation != "" {
			c++
		}
	})
	return c
}

// planText is query's plan as EXPLAIN prints it, for failure messages.
func planText(t *testing.T, pool *pgxpool.Pool, query string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `EXPLAIN `+query, args...)
	if err != nil {
		return fmt.Sprintf("(explain: %v)", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Sprintf("(explain: %v)", err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestForeignKeysIndexed fails when a foreign key of closer's tables has no
// index whose leading columns are the key's columns (a full, valid index:
// a partial one does not serve every row). ON DELETE CASCADE and the check
// of a deleted referenced row look the referencing rows up by those
// columns; without such an index each deleted row scans the referencing
// table, and deleting a study deletes every participant of it.
func TestForeignKeysIndexed(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	missing := func() []string {
		rows, err := pool.Query(context.Background(), fkWithoutIndexSQL)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if m := missing(); len(m) > 0 {
		t.Fatalf("foreign keys without an index on their columns: %s", strings.Join(m, "; "))
	}
	// The check must be able to fail: questions_participant is the only
	// full index starting with questions' (participant_id, study_id).
	if _, err := pool.Exec(context.Background(), `DROP INDEX questions_participant`); err != nil {
		t.Fatal(err)
	}
	if m := missing(); !slices.Contains(m, "questions (participant_id, study_id)") {
		t.Fatalf("without questions_participant the check found %v", m)
	}
}

// fkWithoutIndexSQL lists "table (columns)" of every foreign key of the
// public schema (River's tables aside) that no full, valid index starts
// with, in any column order.
const fkWithoutIndexSQL = `
	SELECT c.conrelid::regclass::text || ' (' ||
		(SELECT string_agg(a.attname, ', ' ORDER BY k.ord)
		 FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
		 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) || ')'
	FROM pg_constraint c
	WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
		AND c.conrelid::regclass::text NOT LIKE 'river\_%'
		AND NOT EXISTS (
			SELECT 1 FROM pg_index i
			WHERE i.indrelid = c.conrelid AND i.indpred IS NULL AND i.indisvalid
				AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
				AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)
	ORDER BY 1`
