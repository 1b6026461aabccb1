package collect_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// designStore is a store with the stateful designs registered, as cmd/web
// builds it; each call is a new "process" with empty caches.
func designStore(pool *pgxpool.Pool) (*collect.Store, map[string]*collect.DesignScheduler) {
	s := collect.New(pool)
	return s, collect.RegisterDesigns(s)
}

// designStudy creates an open study with the given design and n items
// (inserted directly: the designs only need indices and labels item0..).
func designStudy(t testing.TB, s *collect.Store, slug, design string, cfg study.DesignConfig, n, perParticipant int) study.Study {
	t.Helper()
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: perParticipant,
		Status: study.StatusOpen, Design: design, DesignConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	collect.InsertLabelItems(t, collect.PoolOf(s), st.ID, n)
	return st
}

// recorded waits until s's designs have recorded every answer stored so
// far: a landmark design records its answers shortly after they are
// acknowledged, not before (DesignScheduler).
func recorded(t *testing.T, s *collect.Store) {
	t.Helper()
	if err := s.RecordPending(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// answerFor is the simulated crowd's answer to q (which option is closer).
func answerFor(o *triplet.Oracle, q *study.Question) int {
	a, l, r := q.Anchor.Index, q.Options[0].Index, q.Options[1].Index
	return o.Answer(a, min(l, r), max(l, r)).Closer
}

// basisRun is what a finished basis study leaves behind.
type basisRun struct {
	dhat      int
	coords    *mat.Dense
	learned   []triplet.Triplet // the scheme's majority-voted triplets
	events    []triplet.Triplet // design_events in order
	answered  []triplet.Triplet // every stored answer to a basis question, sorted
	fallbacks int
	restores  int64
}

// crashingReplica drives a design study through the store as a crowd
// would, and with a crash rate set "crashes" between requests: every other
// crash restarts the replica (a fresh Store on the same database), the
// others drop its caches, with questions still out on lease. Restores from
// PostgreSQL are counted across restarts.
type crashingReplica struct {
	t             *testing.T
	pool          *pgxpool.Pool
	design        string
	snapshotEvery int // 0: the store's default
	crash         func() bool
	s             *collect.Store
	schs          map[string]*collect.DesignScheduler
	restarts      int
	restores      int64
}

// newCrashingReplica starts the first replica; with crashSeed 0 it never
// crashes, otherwise it crashes after a request with probability rate.
func newCrashingReplica(t *testing.T, pool *pgxpool.Pool, design string, crashSeed uint64, rate float64, snapshotEvery int) *crashingReplica {
	r := &crashingReplica{t: t, pool: pool, design: design}
	if crashSeed != 0 {
		r.snapshotEvery = snapshotEvery
		rng := triplet.NewRand(crashSeed)
		r.crash = func() bool { return rng.Float64() < rate }
	}
	r.start()
	return r
}

func (r *crashingReplica) start() {
	r.s, r.schs = designStore(r.pool)
	if r.snapshotEvery > 0 {
		r.schs[r.design].SnapshotEvery = r.snapshotEvery
	}
}

func (r *crashingReplica) maybeCrash() {
	if r.crash == nil || !r.crash() {
		return
	}
	r.restarts++
	if r.restarts%2 == 0 {
		r.restores += r.schs[r.design].CacheStats().Restores
		r.start()
		return
	}
	for _, sc := range r.schs {
		sc.DropCache()
	}
}

// round lets m new participants take a question each, then answers them in
// order with the oracle; it returns the questions.
func (r *crashingReplica) round(st study.Study, m int, o *triplet.Oracle) []*study.Question {
	r.t.Helper()
	ctx := context.Background()
	var qs []*study.Question
	var ps []int64
	for range m {
		p, _, err := r.s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			r.t.Fatal(err)
		}
		pr, err := r.s.Next(ctx, p.ID)
		if err != nil {
			r.t.Fatal(err)
		}
		qs, ps = append(qs, pr.Question), append(ps, p.ID)
		r.maybeCrash()
	}
	for i, q := range qs {
		if _, err := r.s.Answer(ctx, ps[i], study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
			r.t.Fatal(err)
		}
		r.maybeCrash()
	}
	// The crowd is slower than the writer: the next round sees these
	// answers recorded, so that runs with and without restarts agree.
	recorded(r.t, r.s)
	return qs
}

// finish checks that a crashing run crashed at least minRestarts times and
// returns the restores from PostgreSQL of the whole run.
func (r *crashingReplica) finish(minRestarts int) int64 {
	r.t.Helper()
	if r.crash != nil && r.restarts < minRestarts {
		r.t.Fatalf("only %d restarts; the test wants several", r.restarts)
	}
	return r.restores + r.schs[r.design].CacheStats().Restores
}

// designEvents returns the answers a study's design recorded, in order.
func designEvents(t *testing.T, pool *pgxpool.Pool, studyID int64) []triplet.Triplet {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT anchor, closer, farther FROM design_events WHERE study_id = $1 ORDER BY version`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (triplet.Triplet, error) {
		var tr triplet.Triplet
		err := row.Scan(&tr.Anchor, &tr.Closer, &tr.Farther)
		return tr, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// runBasisCrowd drives a basis study through the store with a simulated
// crowd (crashingReplica, m participants a round) until the design is
// done. A crashing run also snapshots every 37 answers (instead of 500),
// so its restores start from intermediate snapshots.
func runBasisCrowd(t *testing.T, cfg study.DesignConfig, x *mat.Dense, m int, crashSeed uint64) basisRun {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	n, _ := x.Dims()
	r := newCrashingReplica(t, pool, study.DesignBasis, crashSeed, 0.06, 37)
	st := designStudy(t, r.s, "basis", study.DesignBasis, cfg, n, 1)
	o := triplet.NewOracle(x, 0, 1)
	for round := 0; ; round++ {
		if round > 5000 {
			t.Fatal("basis run did not finish")
		}
		status, err := r.s.DesignStatusOf(ctx, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		if status.Progress.Done {
			break
		}
		r.round(st, m, o)
	}
	restores := r.finish(3)
	fresh, _ := designStore(pool)
	d, err := fresh.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sc := d.(*basis.Scheme)
	run := basisRun{dhat: sc.DHat(), coords: sc.Coordinates(), learned: sc.Triplets(), restores: restores,
		events: designEvents(t, pool, st.ID)}
	rows, err := pool.Query(ctx, `
		SELECT a.anchor, a.closer, a.farther FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND q.design = $2 ORDER BY 1, 2, 3`, st.ID, study.DesignBasis)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tr triplet.Triplet
		if err := rows.Scan(&tr.Anchor, &tr.Closer, &tr.Farther); err != nil {
			t.Fatal(err)
		}
		run.answered = append(run.answered, tr)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM questions WHERE study_id = $1 AND design = $2`,
		st.ID, study.DesignFallback).Scan(&run.fallbacks); err != nil {
		t.Fatal(err)
	}
	var snapVersion int64
	if err := pool.QueryRow(ctx, `SELECT snapshot_version FROM design_states WHERE study_id = $1`, st.ID).Scan(&snapVersion); err != nil {
		t.Fatal(err)
	}
	t.Logf("crash seed %d: %d restarts, %d restores, d̂ = %d, %d design answers (last snapshot at %d), %d fallbacks",
		crashSeed, r.restarts, restores, run.dhat, len(run.events), snapVersion, run.fallbacks)
	return run
}

// Issue 5's crash test: the basis scheduler, stopped at random points
// (caches dropped, or a fresh Store as a restarted replica), finishes with
// the same result as an uninterrupted run with the same seed and answers.
func TestBasisSurvivesRestarts(t *testing.T) {
	t.Parallel()
	// 18 points in the plane: basis.Run with 4 annotators needs 312
	// answers and finds d̂ = 2.
	x := triplet.Gaussian(triplet.NewRand(7), 18, 2, 1)
	cfg := study.DesignConfig{Seed: 3, Repeats: 1}
	const m = 4
	want := runBasisCrowd(t, cfg, x, m, 0)
	if want.dhat < 1 || want.coords == nil || len(want.events) == 0 {
		t.Fatalf("uninterrupted run: d̂ = %d, %d events", want.dhat, len(want.events))
	}
	for _, crashSeed := range []uint64{11} {
		got := runBasisCrowd(t, cfg, x, m, crashSeed)
		if got.restores <= want.restores {
			t.Errorf("crash seed %d: %d restores from PostgreSQL, uninterrupted %d: the caches were not dropped", crashSeed, got.restores, want.restores)
		}
		if got.dhat != want.dhat {
			t.Errorf("crash seed %d: d̂ = %d, uninterrupted %d", crashSeed, got.dhat, want.dhat)
		}
		if !mat.Equal(got.coords, want.coords) {
			t.Errorf("crash seed %d: coordinates differ from the uninterrupted run", crashSeed)
		}
		if !slices.Equal(got.events, want.events) {
			t.Errorf("crash seed %d: %d recorded design answers differ from the uninterrupted run's %d", crashSeed, len(got.events), len(want.events))
		}
		if !slices.Equal(got.learned, want.learned) {
			t.Errorf("crash seed %d: the scheme's triplets differ", crashSeed)
		}
		if !slices.Equal(got.answered, want.answered) {
			t.Errorf("crash seed %d: the stored answers to basis questions differ (%d vs %d)", crashSeed, len(got.answered), len(want.answered))
		}
	}
	// The store drove the same scheme a plain simulation drives: same d̂.
	sim := basis.New(18, basis.Config{Seed: 3, Repeats: 1})
	basis.Run(sim, triplet.NewOracle(x, 0, 1), m, 0)
	if sim.DHat() != want.dhat {
		t.Errorf("store run d̂ = %d, basis.Run d̂ = %d", want.dhat, sim.DHat())
	}
}

// Two replicas (two Stores on one database) and many participants answering
// a landmark study at once: no comparison is handed out (leased) more often
// than repeats allows, coverage completes, then random fallbacks continue.
func TestLandmarkTwoReplicasConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	a, _ := designStore(pool)
	b, _ := designStore(pool)
	const n, repeats = 12, 2
	st := designStudy(t, a, "lm", study.DesignLandmarkK1, study.DesignConfig{Seed: 5, Landmarks: 3, Repeats: repeats}, n, 12)
	// (n−L)·C(L,2) + L·C(L−1,2) = 9·3 + 3·1 = 30 comparisons (package landmark's formula).
	status, err := a.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if status.Comparisons != 30 || status.Size != 60 || len(status.Landmarks) != 3 {
		t.Fatalf("planned design: %d comparisons, size %d, landmarks %v; want 30, 60, 3", status.Comparisons, status.Size, status.Landmarks)
	}
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(2), n, 2, 1), 0.1, 3)
	const participants = 16
	var wg sync.WaitGroup
	errs := make(chan error, participants)
	for i := range participants {
		wg.Go(func() {
			s := a
			if i%2 == 1 {
				s = b
			}
			p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("p", i), nil)
			if err != nil {
				errs <- err
				return
			}
			for k := 0; ; k++ {
				// Alternate replicas request by request.
				if k%3 == 2 {
					s = map[bool]*collect.Store{true: a, false: b}[s == b]
				}
				pr, err := s.Next(ctx, p.ID)
				if err != nil {
					errs <- err
					return
				}
				if pr.Done {
					return
				}
				q := pr.Question
				if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every design question is a lease; none expired in this test.
	var over int
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT 1 FROM questions WHERE study_id = $1 AND design = $2
			GROUP BY anchor, least(left_idx, right_idx), greatest(left_idx, right_idx) HAVING count(*) > $3) x`,
		st.ID, study.DesignLandmarkK1, repeats).Scan(&over); err != nil {
		t.Fatal(err)
	}
	var designQs, fallbacks, total int
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE design = $2), count(*) FILTER (WHERE design = $3), count(*)
		FROM questions WHERE study_id = $1`, st.ID, study.DesignLandmarkK1, study.DesignFallback).
		Scan(&designQs, &fallbacks, &total); err != nil {
		t.Fatal(err)
	}
	if over != 0 {
		t.Errorf("%d comparisons handed out more than %d times", over, repeats)
	}
	if designQs != 60 || fallbacks != total-60 || total != participants*12 {
		t.Errorf("%d design questions, %d fallbacks of %d; want 60, %d of %d", designQs, fallbacks, total, participants*12-60, participants*12)
	}
	status, err = b.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	lp := status.Progress.Landmark
	if !status.Progress.Done || lp == nil || lp.Covered != 30 || lp.Answered != 60 || status.Recorded != 60 {
		t.Errorf("after the run: done %v, progress %+v, %d recorded; want covered 30, answered 60", status.Progress.Done, lp, status.Recorded)
	}
	if status.Fallbacks != total-60 || status.ActiveLeases != 0 {
		t.Errorf("status: %d fallback answers, %d active leases; want %d and 0", status.Fallbacks, status.ActiveLeases, total-60)
	}
	// The stored state equals a design fed the same answers in order.
	d, err := a.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	ld := d.(*landmark.Design)
	if !ld.Done() || ld.Progress().Answered != 60 {
		t.Errorf("restored design: done %v, %+v", ld.Done(), ld.Progress())
	}
}

// An expired lease returns its comparison to the pool, and the late answer
// to it is stored but not counted twice by the design.
func TestExpiredLeaseReturnsToPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, schs := designStore(pool)
	// The lease below expires by hand, at once: the process's note that
	// the design was full (FullFor, TestFullDesignFallsBackAtOnce) would
	// hide it for a moment.
	schs[study.DesignLandmarkK1].FullFor = 0
	// 4 items, landmarks {0, 1} picked: k1 asks (2; 0, 1) and (3; 0, 1).
	// One question each: nobody holds a second comparison ahead.
	st := designStudy(t, s, "lease", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 1)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 1, Status: study.StatusOpen,
		Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, LandmarkItems: []int{0, 1}}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	next := func() (int64, *study.Question) { return newQuestion(t, s, st.ID) }
	pa, qa := next()
	_, qb := next()
	_, qc := next()
	if qa.Design != study.DesignLandmarkK1 || qb.Design != study.DesignLandmarkK1 || qc.Design != study.DesignFallback {
		t.Fatalf("designs %s, %s, %s; want two landmark questions then a fallback", qa.Design, qb.Design, qc.Design)
	}
	if qa.Anchor.Index < 2 || min(qa.Options[0].Index, qa.Options[1].Index) != 0 || max(qa.Options[0].Index, qa.Options[1].Index) != 1 {
		t.Fatalf("question %d; %d, %d is not a k1 question on landmarks 0 and 1", qa.Anchor.Index, qa.Options[0].Index, qa.Options[1].Index)
	}
	// Time passes beyond the TTL for A's lease.
	if _, err := pool.Exec(ctx, `UPDATE design_leases SET expires_at = now() - interval '1 second' WHERE participant_id = $1`, pa); err != nil {
		t.Fatal(err)
	}
	pd, qd := next()
	if qd.Design != study.DesignLandmarkK1 || qd.Anchor.Index != qa.Anchor.Index {
		t.Fatalf("after A's lease expired: %s question on anchor %d; want A's comparison (anchor %d) again", qd.Design, qd.Anchor.Index, qa.Anchor.Index)
	}
	for _, pq := range []struct {
		p int64
		q *study.Question
	}{{pd, qd}, {pa, qa}} {
		if _, err := s.Answer(ctx, pq.p, study.AnswerInput{QuestionID: pq.q.ID, Closer: pq.q.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
	recorded(t, s)
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if status.Recorded != 1 || status.Progress.Landmark.Answered != 1 || status.Answers != 2 {
		t.Fatalf("design recorded %d (progress %+v) of %d stored answers; want 1 of 2", status.Recorded, status.Progress.Landmark, status.Answers)
	}
	var leases int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_leases WHERE study_id = $1`, st.ID).Scan(&leases); err != nil {
		t.Fatal(err)
	}
	if leases != 1 { // B's, unanswered
		t.Fatalf("%d leases left; want B's only", leases)
	}
}

// Under concurrency a landmark design still serves the least-answered
// comparisons first, counting the answers out on lease: with repeats 2,
// every comparison has its first answer before any has its second.
func TestLandmarkCoverageGrowsEvenly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	st := designStudy(t, s, "even", study.DesignLandmarkK1, study.DesignConfig{Seed: 8, Landmarks: 3, Repeats: 2}, 12, 1)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(4), 12, 2, 1), 0, 1)
	answered := 0
	for round := 0; answered < 60; round++ {
		ps, qs := holdQuestions(t, s, st.ID, 6) // six participants hold a question at once
		for i, q := range qs {
			if _, err := s.Answer(ctx, ps[i], study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
				t.Fatal(err)
			}
			answered++
		}
		recorded(t, s)
		status, err := s.DesignStatusOf(ctx, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := status.Progress.Landmark
		// 30 comparisons: after a answers, min(a, 30) have one or more
		// and max(0, a−30) have two.
		if wantCovered := max(0, answered-30); p.Covered != wantCovered || p.Answered != answered {
			t.Fatalf("after %d answers: %d comparisons covered, %d answers accepted; want %d and %d", answered, p.Covered, p.Answered, wantCovered, answered)
		}
	}
}

// TestLandmarkItemsChecked: picked landmarks are item indices the store
// checks against the study's items: none before items exist, each in range,
// none twice; a valid pick is stored and replaces the number.
func TestLandmarkItemsChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	if _, err := s.CreateStudy(ctx, study.StudyInput{Slug: "early", Title: "early", QuestionsPerParticipant: 3,
		Status: study.StatusDraft, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{LandmarkItems: []int{0, 1}}}); collect.KindOf(err) != study.KindInvalid ||
		!strings.Contains(err.Error(), "upload the items before picking landmarks") {
		t.Errorf("picks before items: %v", err)
	}
	st := designStudy(t, s, "picks", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 3)
	update := func(items ...int) error {
		_, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3,
			Status: study.StatusDraft, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, Landmarks: 3, LandmarkItems: items}})
		return err
	}
	for _, c := range []struct {
		items []int
		want  string
	}{
		{[]int{0, 4}, "landmark 4 is not an item index 0..3"},
		{[]int{-1, 2}, "landmark -1 is not an item index 0..3"},
		{[]int{2, 2}, "landmark 2 is picked twice"},
	} {
		if err := update(c.items...); collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.items, err, c.want)
		}
	}
	if err := update(3, 1); err != nil {
		t.Fatal(err)
	}
	c, err := s.DesignConfigOf(ctx, st.ID)
	if err != nil || !slices.Equal(c.LandmarkItems, []int{3, 1}) || c.Landmarks != 0 {
		t.Errorf("stored %+v, %v; want items [3 1] and no number", c, err)
	}
}

// A question that finds the design full makes the process take it for full
// for a moment (DesignScheduler.FullFor): the next questions are random
// fallbacks at once, even when a lease expired meanwhile, until the
// process's writer records an answer; then the expired lease is taken over.
func TestFullDesignFallsBackAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, schs := designStore(pool)
	schs[study.DesignLandmarkK1].FullFor = time.Hour                                                         // no expiry within the test
	st := designStudy(t, s, "full", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 1) // two comparisons
	next := func() (int64, *study.Question) { return newQuestion(t, s, st.ID) }
	pa, qa := next()
	pb, qb := next()
	_, qc := next()
	if qa.Design != study.DesignLandmarkK1 || qb.Design != study.DesignLandmarkK1 || qc.Design != study.DesignFallback {
		t.Fatalf("designs %s, %s, %s; want two landmark questions then a fallback", qa.Design, qb.Design, qc.Design)
	}
	if _, err := pool.Exec(ctx, `UPDATE design_leases SET expires_at = now() - interval '1 second' WHERE participant_id = $1`, pa); err != nil {
		t.Fatal(err)
	}
	if _, qd := next(); qd.Design != study.DesignFallback {
		t.Fatalf("with the design taken for full: a %s question; want a fallback", qd.Design)
	}
	if _, err := s.Answer(ctx, pb, study.AnswerInput{QuestionID: qb.ID, Closer: qb.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	recorded(t, s)
	if _, qe := next(); qe.Design != study.DesignLandmarkK1 || qe.Anchor.Index != qa.Anchor.Index {
		t.Fatalf("after the writer recorded an answer: a %s question on anchor %d; want A's expired comparison (anchor %d)", qe.Design, qe.Anchor.Index, qa.Anchor.Index)
	}
}
