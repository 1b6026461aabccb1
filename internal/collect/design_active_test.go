package collect_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// activeState returns the active design of arm 0 as stored.
func activeState(t *testing.T, s *collect.Store, studyID int64) *active.Design {
	t.Helper()
	d, err := s.DesignState(context.Background(), studyID, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := d.(*active.Design)
	if !ok {
		t.Fatalf("the state is %T", d)
	}
	return a
}

// refreshActive scores the next pool of the study's active arm as the
// recompute worker will: ActiveArms' copy of the state, a t-STE fit of the
// study's answers (held-out ones left out), NextPool; then ApplyActivePool.
func refreshActive(t *testing.T, s *collect.Store, studyID int64) []active.Question {
	t.Helper()
	ctx := context.Background()
	arms, err := s.ActiveArms(ctx, studyID)
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 1 || arms[0].State == nil || !arms[0].State.WarmedUp() || arms[0].Version != int64(arms[0].State.Answered()) {
		t.Fatalf("active arms %+v", arms)
	}
	ras, err := s.RunAnswers(ctx, studyID, true)
	if err != nil {
		t.Fatal(err)
	}
	var answers []triplet.Triplet
	for _, a := range ras {
		if a.Design != study.DesignHeldout {
			answers = append(answers, triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther})
		}
	}
	n := arms[0].State.N()
	fit, err := embed.Fit(ctx, n, answers, embed.Options{Method: embed.TSTE, Dim: 2, Seed: 1, MaxIter: 50})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := arms[0].State.NextPool(fit.X, answers)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("an empty pool")
	}
	if err := s.ApplyActivePool(ctx, studyID, arms[0].Arm, qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// poolRows returns arm 0's design_pool rows in claim order.
func poolRows(t *testing.T, pool *pgxpool.Pool, studyID int64) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT format('%s;%s,%s wanted %s taken %s ord %s', anchor, j, k, wanted, taken, ord)
		FROM design_pool WHERE study_id = $1 AND arm = 0 ORDER BY band, prio, anchor, j, k`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// activeAnswers counts the study's answers to questions recorded as design.
func answersTo(t *testing.T, pool *pgxpool.Pool, studyID int64, design string) int {
	t.Helper()
	var c int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND q.design = $2`, studyID, design).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The active design through the store: during the warm-up (1 answer per
// item, 8 items) every question is a random question recorded as
// 'active', exactly while the design has recorded fewer answers than the
// warm-up; then, with no pool yet, random-fallback questions the design
// does not record; after ApplyActivePool the pool's questions are served in
// the pool's order, each to at most Repeats (2) participants and never
// twice to one, and when they are used up the questions are fallbacks
// again. The design records exactly the answers to its own questions.
func TestActiveDesignInTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	const n = 8
	cfg := study.DesignConfig{Seed: 7, Warmup: 1, Repeats: 2, Pool: 6, Candidates: 50}
	st := designStudy(t, s, "active", study.DesignActive, cfg, n, 40)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(2), n, 2, 1), 0, 1)

	// Warm-up, one participant answering one question at a time: a new
	// question is 'active' exactly while the design recorded fewer than 8.
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	recordedNow := 0 // answers the design recorded, as this test counts them
	checkNew := func(q *study.Question, before int) {
		t.Helper()
		if q == nil || seen[q.ID] {
			return
		}
		seen[q.ID] = true
		want := study.DesignFallback
		if before < n {
			want = study.DesignActive
		}
		if q.Design != want {
			t.Fatalf("a question issued after %d recorded answers is %s, want %s", before, q.Design, want)
		}
	}
	fallbacks := 0
	for fallbacks < 3 {
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkNew(pr.Question, recordedNow)
		checkNew(pr.Ahead, recordedNow)
		q := pr.Question
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
			t.Fatal(err)
		}
		recorded(t, s)
		if q.Design == study.DesignActive {
			recordedNow++
		} else {
			fallbacks++
		}
		if got := activeState(t, s, st.ID).Answered(); got != recordedNow {
			t.Fatalf("the design recorded %d answers, %d were to its questions", got, recordedNow)
		}
	}
	if recordedNow != n+1 { // the warm-up, and the question issued ahead of the last one
		t.Fatalf("%d warm-up answers, want %d", recordedNow, n+1)
	}
	if rows := poolRows(t, pool, st.ID); len(rows) != 0 {
		t.Fatalf("design_pool holds %v before any refresh", rows)
	}

	// A refresh: the pool's rows in its order, each wanted twice.
	qs := refreshActive(t, s, st.ID)
	d := activeState(t, s, st.ID)
	if d.Refreshes() != 1 || !slices.Equal(d.Pool(nil), qs) || d.PoolLeft() != 2*len(qs) {
		t.Fatalf("after the refresh: %d refreshes, pool %v (want %v), %d left", d.Refreshes(), d.Pool(nil), qs, d.PoolLeft())
	}
	rows := poolRows(t, pool, st.ID)
	if len(rows) != len(qs) {
		t.Fatalf("design_pool %v, pool %v", rows, qs)
	}

	// Participants one after the other: each new pool question is the
	// first in the pool's order with fewer than 2 out that the participant
	// was not asked (their warm-up questions count).
	served := make([]int, len(qs))
	asked := map[int64]map[triplet.Key]bool{}
	askedRows, err := pool.Query(ctx, `SELECT participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx)
		FROM questions WHERE study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for askedRows.Next() {
		var pid int64
		var k triplet.Key
		if err := askedRows.Scan(&pid, &k.Anchor, &k.J, &k.K); err != nil {
			t.Fatal(err)
		}
		if asked[pid] == nil {
			asked[pid] = map[triplet.Key]bool{}
		}
		asked[pid][k] = true
	}
	askedRows.Close()
	expectNext := func(pid int64, q *study.Question) {
		t.Helper()
		if q == nil || seen[q.ID] {
			return
		}
		seen[q.ID] = true
		want := -1
		for i, pq := range qs {
			if served[i] < 2 && !asked[pid][pq.Key] {
				want = i
				break
			}
		}
		if asked[pid] == nil {
			asked[pid] = map[triplet.Key]bool{}
		}
		k := triplet.QuestionKey(q.Anchor.Index, q.Options[0].Index, q.Options[1].Index)
		if asked[pid][k] {
			t.Fatalf("participant %d asked %v twice", pid, k)
		}
		asked[pid][k] = true
		if want < 0 {
			if q.Design != study.DesignFallback {
				t.Fatalf("the pool is used up, yet a %s question %v", q.Design, k)
			}
			return
		}
		if q.Design != study.DesignActive || k != qs[want].Key {
			t.Fatalf("participant %d got %s %v, want pool question %d %v (served %v)", pid, q.Design, k, want, qs[want].Key, served)
		}
		served[want]++
	}
	people := []int64{p.ID}
	for range 4 {
		np, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, np.ID)
	}
	for round := 0; round < 6; round++ {
		for _, pid := range people {
			recorded(t, s)
			pr, err := s.Next(ctx, pid)
			if err != nil {
				t.Fatal(err)
			}
			expectNext(pid, pr.Question)
			expectNext(pid, pr.Ahead)
			if _, err := s.Answer(ctx, pid, study.AnswerInput{QuestionID: pr.Question.ID, Closer: answerFor(o, pr.Question)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, c := range served {
		if c != 2 {
			t.Fatalf("pool question %d served %d times, want 2 (served %v)", i, c, served)
		}
	}
	recorded(t, s)
	d = activeState(t, s, st.ID)
	if d.PoolLeft() != 0 || d.Answered() != answersTo(t, pool, st.ID, study.DesignActive) {
		t.Fatalf("the design recorded %d answers, %d left in its pool; %d answers to its questions",
			d.Answered(), d.PoolLeft(), answersTo(t, pool, st.ID, study.DesignActive))
	}
	if answersTo(t, pool, st.ID, study.DesignFallback) == 0 {
		t.Fatal("no fallback once the pool was used up")
	}
	var twice int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM questions WHERE study_id = $1
		GROUP BY participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx) HAVING count(*) > 1) x`, st.ID).Scan(&twice); err != nil || twice != 0 {
		t.Fatalf("%d comparisons asked twice of one participant, %v", twice, err)
	}
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil || status.Progress.Active == nil || status.Progress.Active.Warmup != n || status.Progress.Active.Refreshes != 1 ||
		status.Progress.Active.Answers != d.Answered() || status.Progress.Active.PoolSize != len(qs) || status.Progress.Active.PoolLeft != 0 {
		t.Fatalf("status %+v, %v", status.Progress.Active, err)
	}
}

// A crash between a refresh and serving: an ApplyActivePool that fails
// leaves the state, the pool and the inbox as they were (the answer the
// inbox held is recorded later as any other); after one that commits, a
// fresh Store serves the same pool, and a process whose cache predates the
// refresh restores the new state before it records an answer.
func TestActivePoolSurvivesCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	sA, _ := designStore(pool)
	sB, schsB := designStore(pool)
	// A process takes an arm whose pool was found empty for full for
	// FullFor (100 ms), whoever refills it meanwhile: B would serve
	// fallbacks that long after A's refresh. Not what this test is about.
	schsB[study.DesignActive].FullFor = 0
	const n = 8
	cfg := study.DesignConfig{Seed: 9, Warmup: 1, Pool: 4, Candidates: 50}
	st := designStudy(t, sA, "crash", study.DesignActive, cfg, n, 40)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(5), n, 2, 1), 0, 1)
	p, _, err := sA.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n + 2 {
		// The first question through B, which caches the state and takes
		// the design for warming up; the others through A.
		s := sA
		if i == 0 {
			s = sB
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: answerFor(o, pr.Question)}); err != nil {
			t.Fatal(err)
		}
		recorded(t, sA)
		recorded(t, sB)
	}
	var stateBefore []byte
	var versionBefore int64
	readState := func() ([]byte, int64) {
		t.Helper()
		var snap []byte
		var v int64
		var rev string
		if err := pool.QueryRow(ctx, `SELECT snapshot, version, rev FROM design_states WHERE study_id = $1 AND arm = 0`, st.ID).
			Scan(&snap, &v, &rev); err != nil {
			t.Fatal(err)
		}
		return append(snap, rev...), v
	}
	stateBefore, versionBefore = readState()
	poolBefore := poolRows(t, pool, st.ID)
	// An answer in the inbox, its writer not run (as if its process
	// stopped after the answer's commit).
	if _, err := pool.Exec(ctx, `INSERT INTO design_inbox (study_id, arm, participant_id, anchor, closer, farther) VALUES ($1, 0, $2, 0, 1, 2)`,
		st.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	// A refresh the design refuses (an item it does not have) fails after
	// the inbox was recorded in its transaction: nothing of it stays.
	bad := []active.Question{{Key: triplet.Key{Anchor: 0, J: 1, K: 2}, Score: 0.5}, {Key: triplet.Key{Anchor: n, J: 1, K: 2}, Score: 0.4}}
	if err := sA.ApplyActivePool(ctx, st.ID, 0, bad); err == nil {
		t.Fatal("a pool over an item the study does not have was applied")
	}
	if after, v := readState(); !bytes.Equal(after, stateBefore) || v != versionBefore {
		t.Fatalf("a failed refresh changed the state (version %d, was %d)", v, versionBefore)
	}
	if rows := poolRows(t, pool, st.ID); !slices.Equal(rows, poolBefore) {
		t.Fatalf("a failed refresh changed the pool: %v, was %v", rows, poolBefore)
	}
	var inbox int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_inbox WHERE study_id = $1`, st.ID).Scan(&inbox); err != nil || inbox != 1 {
		t.Fatalf("the inbox holds %d answers after the failed refresh, %v; want the 1", inbox, err)
	}
	if d := activeState(t, sA, st.ID); d.Refreshes() != 0 || d.Answered() != int(versionBefore) {
		t.Fatalf("after the failed refresh: %d refreshes, %d answers", d.Refreshes(), d.Answered())
	}
	var nf *study.Error
	if err := sA.ApplyActivePool(ctx, st.ID, 1, nil); !errors.As(err, &nf) || nf.Kind != study.KindNotFound {
		t.Fatalf("a refresh of an arm without a state: %v", err)
	}

	// A refresh that commits (it records the inbox first).
	qs := refreshActive(t, sA, st.ID)
	if _, v := readState(); v != versionBefore+1 {
		t.Fatalf("version %d after the refresh, want %d (the inbox's answer)", v, versionBefore+1)
	}
	// A fresh process (a restarted replica) serves the same pool.
	sC, _ := designStore(pool)
	if d := activeState(t, sC, st.ID); !slices.Equal(d.Pool(nil), qs) || d.Refreshes() != 1 {
		t.Fatalf("a fresh store reads the pool %v, want %v", d.Pool(nil), qs)
	}
	fresh, _, err := sC.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := sC.Next(ctx, fresh.ID)
	if err != nil {
		t.Fatal(err)
	}
	if k := triplet.QuestionKey(pr.Question.Anchor.Index, pr.Question.Options[0].Index, pr.Question.Options[1].Index); pr.Question.Design != study.DesignActive || k != qs[0].Key {
		t.Fatalf("a fresh store served %s %v, want the pool's first %v", pr.Question.Design, k, qs[0].Key)
	}
	// Store B cached the state before the refresh, and last saw the design
	// warming up: it serves the pool (not a warm-up question, not a
	// fallback), and restores the new state before it records the answer.
	restores := schsB[study.DesignActive].CacheStats().Restores
	other, _, err := sB.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err = sB.Next(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Question.Design != study.DesignActive {
		t.Fatalf("store B served a %s question with the pool not used up", pr.Question.Design)
	}
	if _, err := sB.Answer(ctx, other.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: answerFor(o, pr.Question)}); err != nil {
		t.Fatal(err)
	}
	recorded(t, sB)
	if schsB[study.DesignActive].CacheStats().Restores == restores {
		t.Fatal("store B recorded with its cache from before the refresh")
	}
	d := activeState(t, sB, st.ID)
	if d.Refreshes() != 1 || d.PoolLeft() != len(qs)-1 || d.Answered() != int(versionBefore)+2 {
		t.Fatalf("after B's answer: %d refreshes, %d left of %d, %d answers", d.Refreshes(), d.PoolLeft(), len(qs), d.Answered())
	}
}
