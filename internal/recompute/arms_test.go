package recompute_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// armsStudy creates an open study of n demo items with the arms and
// held-out share given.
func armsStudy(t *testing.T, store *collect.Store, slug string, arms []study.Arm, heldout float64, n, per int) study.Study {
	t.Helper()
	ctx := context.Background()
	st, err := store.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: per,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: heldout})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	return st
}

// participate joins a participant and answers up to limit of their
// questions (all with limit < 0) with answer (the closer option), in
// order; it returns the participant and the questions answered.
func participate(t *testing.T, store *collect.Store, studyID int64, limit int, answer func(p study.Participant, q *study.Question) int) (study.Participant, []study.Question) {
	t.Helper()
	ctx := context.Background()
	p, _, err := store.CreateParticipant(ctx, studyID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var done []study.Question
	for limit < 0 || len(done) < limit {
		pr, err := store.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done || pr.Question == nil {
			break
		}
		q := pr.Question
		if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: answer(p, q)}); err != nil {
			t.Fatal(err)
		}
		done = append(done, *q)
	}
	return p, done
}

// oracleAnswer is the answer of an error-free annotator who sees the
// points x.
func oracleAnswer(x *mat.Dense, q *study.Question) int {
	a, l, r := q.Anchor.Index, q.Options[0].Index, q.Options[1].Index
	if triplet.SqDist(x, a, l) < triplet.SqDist(x, a, r) {
		return l
	}
	return r
}

// Two random arms and 20% of the questions held out: the "good" arm's
// participants answer every question as the points say, the "noise" arm's
// answer their design's questions by a coin flip (and the held-out ones
// as the points say, so the test set is clean). A run then fits neither
// kernels nor the embedding on the held-out answers (its answer counts
// leave them out, also the embedding's own held-out share), fits each
// arm's own answers and judges the fits on the held-out answers: the
// stored points are exactly what the stored fits give on the held-out
// answers, and the noise arm's error is far above the good arm's. A second
// run carries the first's points in its learning curve and adds its own.
// An excluded participant's answers, held-out ones included, are left out.
func TestArmsComparedOnHeldOutAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	const n, per = 16, 60
	arms := []study.Arm{{Name: "good", Design: study.DesignRandom, Share: 0.5}, {Name: "noise", Design: study.DesignRandom, Share: 0.5}}
	st := armsStudy(t, store, "compare", arms, 0.2, n, per)
	x := triplet.Gaussian(triplet.NewRand(11), n, 2, 1)
	flips := triplet.NewRand(12)
	answer := func(p study.Participant, q *study.Question) int {
		if p.Arm == 1 && q.Design != study.DesignHeldout {
			if flips.IntN(2) == 0 {
				return q.Options[0].Index
			}
			return q.Options[1].Index
		}
		return oracleAnswer(x, q)
	}
	crowd := func(k int) {
		for range k {
			participate(t, store, st.ID, -1, answer)
		}
	}
	crowd(16) // 8 an arm: with 5 the noise arm's fit of its coin flips once reached .26 held-out error by chance
	// One more participant, excluded: left out of everything.
	victim, _ := participate(t, store, st.ID, -1, answer)
	if err := store.SetExcluded(ctx, st.ID, victim.PublicID, true); err != nil {
		t.Fatal(err)
	}

	check := func(runs int) *recompute.Result {
		t.Helper()
		id, err := recompute.Run(ctx, store, st.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		all, err := store.RunAnswers(ctx, st.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		var heldout []triplet.Triplet
		perArm := make([]int, 2)
		people := []map[int64]bool{{}, {}}
		for _, a := range all {
			people[a.Arm][a.Participant] = true
			if a.Design == study.DesignHeldout {
				heldout = append(heldout, triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther})
			} else {
				perArm[a.Arm]++
			}
		}
		if len(heldout) < len(all)/6 {
			t.Fatalf("%d held-out answers of %d", len(heldout), len(all))
		}
		run, blob, err := store.LatestResult(ctx, st.ID)
		if err != nil || run.ID != id {
			t.Fatal(run, err)
		}
		res, err := recompute.Decode(blob)
		if err != nil {
			t.Fatal(err)
		}
		// No fit saw the held-out answers: the run's count, the kernels'
		// and the embedding's input (its train and held-out share) are the
		// other answers.
		fitted := len(all) - len(heldout)
		if run.Answers != fitted || res.Answers != fitted || res.Train+res.Heldout != fitted || res.HeldoutAnswers != len(heldout) {
			t.Fatalf("run of %d answers, result %d (%d + %d), test set %d; want %d fitted, %d held out",
				run.Answers, res.Answers, res.Train, res.Heldout, res.HeldoutAnswers, fitted, len(heldout))
		}
		if len(res.Arms) != 2 {
			t.Fatalf("arms %+v", res.Arms)
		}
		for i, a := range res.Arms {
			if a.Arm != i || a.Name != arms[i].Name || a.Design != study.DesignRandom || a.Share != 0.5 ||
				a.Answers != perArm[i] || a.Heldout != len(heldout) || a.Participants != len(people[i]) {
				t.Fatalf("arm %d: %d answers, %d held out, %d participants; want %d, %d, %d", i, a.Answers, a.Heldout, a.Participants,
					perArm[i], len(heldout), len(people[i]))
			}
			// The stored fit, judged again on the held-out answers.
			emb := mat.NewDense(n, 2, nil)
			for r, row := range a.Embedding {
				emb.SetRow(r, row)
			}
			if w := analysis.Wrong(emb, heldout); w != a.Wrong || a.HeldoutError == nil || *a.HeldoutError != float64(w)/float64(len(heldout)) {
				t.Fatalf("arm %s: %d wrong stored (error %v), the stored fit gets %d wrong", a.Name, a.Wrong, a.HeldoutError, w)
			}
		}
		good, noise := *res.Arms[0].HeldoutError, *res.Arms[1].HeldoutError
		t.Logf("run %d: held-out errors good %.3f, noise %.3f on %d held-out answers", runs, good, noise, len(heldout))
		if good > 0.3 || noise < good+0.2 {
			t.Fatalf("held-out errors: good %.3f, noise %.3f", good, noise)
		}
		if len(res.Curve) != 2*runs {
			t.Fatalf("%d curve points after %d runs", len(res.Curve), runs)
		}
		for i, a := range res.Arms {
			p := res.Curve[len(res.Curve)-2+i]
			if p.Run != id || p.Arm != i || p.Answers != a.Answers || p.Wrong != a.Wrong || p.Heldout != a.Heldout {
				t.Fatalf("this run's curve point %+v, arm %+v", p, a)
			}
		}
		return res
	}
	first := check(1)
	crowd(6)
	second := check(2)
	if !reflect.DeepEqual(first.Curve, second.Curve[:2]) {
		t.Fatalf("the second run's curve starts %+v, the first's is %+v", second.Curve[:2], first.Curve)
	}
	if second.Curve[2].Answers <= first.Curve[0].Answers {
		t.Fatalf("the good arm's answers did not grow: %+v", second.Curve)
	}
	var set recompute.Settings
	runs, err := store.Runs(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(runs[1].Settings, &set); err != nil || set.Heldout != second.HeldoutAnswers || set.Excluded == 0 {
		t.Fatalf("settings %s: %v", runs[1].Settings, err)
	}
}

// The active design as an arm: once its warm-up is over the study is due
// (its pool is empty) whatever its recompute settings say; a run through
// River refreshes the pool (the design_pool rows in the pool's order, each
// head's questions best first, the state's refresh count up) reusing the
// arm's learning-curve fit (same method); the next participant of the arm
// gets the pool's first questions. The study is due again when half the
// pool was answered, not before, and not after the next run.
func TestActiveArmPoolRefreshedByTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	collect.RegisterDesigns(store)
	const n = 12
	arms := []study.Arm{
		{Name: "act", Design: study.DesignActive, Config: study.DesignConfig{Seed: 3, Warmup: 1, Pool: 10, Candidates: 40}, Share: 0.5},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.5},
	}
	st := armsStudy(t, store, "active-arm", arms, 0, n, 10)
	// The usual cadence would not recompute again for a long time.
	if err := store.SetRecomputeSettings(ctx, st.ID, study.RecomputeSettings{MinNewAnswers: 100000, MaxAge: 30 * 24 * time.Hour,
		Method: "tste", Dim: 2}); err != nil {
		t.Fatal(err)
	}
	x := triplet.Gaussian(triplet.NewRand(21), n, 2, 1)
	answer := func(_ study.Participant, q *study.Question) int { return oracleAnswer(x, q) }
	poolDue := func() bool {
		t.Helper()
		if err := store.RecordPending(ctx); err != nil {
			t.Fatal(err)
		}
		ids, err := store.ActivePoolsDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all, err := recompute.DueStudies(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, st.ID) != slices.Contains(all, st.ID) {
			t.Fatalf("ActivePoolsDue %v, the scan's studies %v", ids, all)
		}
		return slices.Contains(ids, st.ID)
	}
	state := func() *active.Design {
		t.Helper()
		d, err := store.DesignState(ctx, st.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d.(*active.Design)
	}
	// The warm-up (12 answers of the active arm), with a run part way.
	for i := 0; ; i++ {
		p, _ := participate(t, store, st.ID, -1, answer)
		if i == 0 {
			if _, err := recompute.Run(ctx, store, st.ID, 0); err != nil {
				t.Fatal(err)
			}
			if poolDue() {
				t.Fatal("due by its pool during the warm-up")
			}
		}
		if p.Arm == 0 && state().WarmedUp() {
			break
		}
	}
	if !poolDue() {
		t.Fatal("warm-up over and no pool: not due")
	}

	// A run through River refreshes the pool.
	jobs := startWorker(t, pool, store)
	before, err := store.LatestRun(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := jobs.Enqueue(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	var run *study.Run
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		run = waitRun(t, store, st.ID)
		if run.ID != before.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job's run did not finish")
		}
	}
	if run.Status != study.RunDone {
		t.Fatalf("run %+v", run)
	}
	// No more runs through River: the worker's start-up scan may have
	// queued one of its own beside the test's, which would refresh the
	// pool once more at a time of its choosing (the runs below are the
	// test's own).
	if err := jobs.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	blob, err := store.RunResult(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	d := state()
	qs := d.Pool(nil)
	if len(res.Pools) != 1 || res.Pools[0].Error != "" || res.Pools[0].Questions != len(qs) || !res.Pools[0].Reused ||
		res.Pools[0].Name != "act" || d.Refreshes() != 1 || len(qs) != 10 {
		t.Fatalf("pools %+v; the design has %d refreshes, a pool of %d", res.Pools, d.Refreshes(), len(qs))
	}
	rows, err := pool.Query(ctx, `SELECT anchor, j, k FROM design_pool WHERE study_id = $1 AND arm = 0 AND wanted > 0
		ORDER BY band, prio`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	var keys []triplet.Key
	for rows.Next() {
		var k triplet.Key
		if err := rows.Scan(&k.Anchor, &k.J, &k.K); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if rows.Err() != nil || len(keys) != len(qs) {
		t.Fatalf("design_pool %v (%v), pool %v", keys, rows.Err(), qs)
	}
	for i, q := range qs {
		if keys[i] != q.Key {
			t.Fatalf("design_pool row %d is %v, the pool's question %v", i, keys[i], q.Key)
		}
		if i > 0 && qs[i-1].Key.Anchor == q.Key.Anchor && qs[i-1].Score < q.Score {
			t.Fatalf("head %d: score %g before %g", q.Key.Anchor, qs[i-1].Score, q.Score)
		}
	}
	if poolDue() {
		t.Fatal("due right after the refresh")
	}

	// The arm's next participant gets the pool's questions, in order; once
	// 5 of the 10 are answered, the study is due.
	answered := 0
	for answered < 5 {
		p, got := participate(t, store, st.ID, 1, answer)
		if p.Arm != 0 {
			continue
		}
		k := triplet.Key{Anchor: got[0].Anchor.Index, J: min(got[0].Options[0].Index, got[0].Options[1].Index), K: max(got[0].Options[0].Index, got[0].Options[1].Index)}
		// Each participant holds a question ahead: the pool's next one.
		if got[0].Design != study.DesignActive || k != qs[2*answered].Key {
			t.Fatalf("participant %d of the active arm got %s question %v, want the pool's question %d %v", answered, got[0].Design, k, 2*answered, qs[2*answered].Key)
		}
		answered++
		if due := poolDue(); due != (answered == 5) {
			t.Fatalf("after %d of the pool's 10 questions answered: due %v (pool left %d)", answered, due, state().PoolLeft())
		}
	}
	if _, err := recompute.Run(ctx, store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if poolDue() || state().Refreshes() != 2 {
		t.Fatalf("after the next run: due, or %d refreshes", state().Refreshes())
	}
}
