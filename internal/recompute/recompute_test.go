package recompute_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/internal/triplet"
)

// synthCSV returns a triplet CSV of n items in two well separated Gaussian
// clusters in 2-D answered by an oracle without noise, m answers from p
// participants, with response times.
func synthCSV(t testing.TB, n, m, p int, seed uint64) []byte {
	t.Helper()
	rng := triplet.NewRand(seed)
	x, _ := triplet.GaussianMixture(rng, n, 2, 2, 6)
	o := triplet.NewOracle(x, 0, seed+1)
	var b bytes.Buffer
	b.WriteString("anchor,closer,farther,participant,response_ms\n")
	for i := range m {
		a, j, k := triplet.RandomQuestion(rng, n)
		tr := o.Answer(a, j, k)
		fmt.Fprintf(&b, "%d,%d,%d,p%03d,%d\n", tr.Anchor, tr.Closer, tr.Farther, i%p, 500+rng.IntN(3000))
	}
	return b.Bytes()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func importStudy(t *testing.T, store *collect.Store, slug string, data []byte) study.Study { //nolint:unparam // the slug is named at the call
	t.Helper()
	st, rep, err := studyfile.ImportTriplets(context.Background(), store, studyfile.TripletsInput{Slug: slug, Title: "Synthetic", CSV: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answers == 0 {
		t.Fatal("nothing imported")
	}
	return st
}

// startWorker starts a worker client (runs recomputes; the periodic scan
// once an hour) and stops it when the test ends.
func startWorker(t *testing.T, pool *pgxpool.Pool, store *collect.Store) *recompute.Jobs {
	t.Helper()
	jobs, err := recompute.New(pool, store, recompute.Config{Work: true, ScanEvery: time.Hour}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop(context.Background()) })
	return jobs
}

func waitRun(t *testing.T, store *collect.Store, studyID int64) *study.Run {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		r, err := store.LatestRun(context.Background(), studyID)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil && r.Status != study.RunRunning {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no finished run within 90 s")
	return nil
}

// TestJobEnqueueRunStore enqueues a recompute through River (real
// PostgreSQL), checks that a second enqueue while the first is queued is a
// duplicate, runs it with a worker client and checks the stored results.
func TestJobEnqueueRunStore(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 24, 1500, 10, 1))

	// An insert-only client (a web replica) enqueues.
	web, err := recompute.New(pool, store, recompute.Config{}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	id1, dup1, err := web.Enqueue(ctx, st.ID)
	if err != nil || dup1 {
		t.Fatalf("first enqueue: id %d dup %v err %v", id1, dup1, err)
	}
	id2, dup2, err := web.Enqueue(ctx, st.ID)
	if err != nil || !dup2 || id2 != id1 {
		t.Fatalf("second enqueue while queued: id %d (first %d) dup %v err %v", id2, id1, dup2, err)
	}
	if state, job, err := web.Pending(ctx, st.ID); err != nil || state != "available" || job != id1 {
		t.Fatalf("pending: %q %v", state, err)
	}

	// A worker replica runs it.
	startWorker(t, pool, store)
	run := waitRun(t, store, st.ID)
	if run.Status != study.RunDone || run.JobID != id1 {
		t.Fatalf("run: %+v", run)
	}
	if run.Answers != 1500 || run.Items != 24 || run.Duration <= 0 {
		t.Fatalf("run figures: %+v", run)
	}
	_, blob, err := store.LatestResult(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Embedding) != 24 || len(res.Embedding[0]) != 2 || len(res.K1PCA) != 24 || len(res.K2PCA) != 24 ||
		len(res.Clusters) != 24 || len(res.Dendrogram) != 23 || len(res.NeighboursKernel) != 24 ||
		len(res.NeighboursEmbedding[0]) != 5 || len(res.Participants) != 10 || len(res.Heatmap) != 24 {
		t.Fatalf("result shapes: %d×?, pca %d/%d, clusters %d, merges %d, nbrs %d, participants %d",
			len(res.Embedding), len(res.K1PCA), len(res.K2PCA), len(res.Clusters), len(res.Dendrogram), len(res.NeighboursKernel), len(res.Participants))
	}
	// Noise-free answers on two separated clusters: the embedding explains
	// nearly every held-out answer (analysis tests find < 5% on such data;
	// 15% leaves room for the 1,500 answers).
	if res.HeldoutError == nil || *res.HeldoutError > 0.15 || res.Heldout < 100 {
		t.Fatalf("held-out error %v on %d answers", res.HeldoutError, res.Heldout)
	}
	if res.K != 2 {
		t.Errorf("clusters: k = %d, want the 2 generating clusters", res.K)
	}

	// Once River marked the job completed, a new enqueue is a new job, and
	// it warm-starts.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		state, _, err := web.Pending(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if state == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s", state)
		}
	}
	id3, dup3, err := web.Enqueue(ctx, st.ID)
	if err != nil || dup3 || id3 == id1 {
		t.Fatalf("enqueue after the run: id %d dup %v err %v", id3, dup3, err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		runs, err := store.Runs(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 2 && runs[1].Status != study.RunRunning {
			if runs[1].Status != study.RunDone || !strings.Contains(string(runs[1].Settings), `"warm_start": true`) &&
				!strings.Contains(string(runs[1].Settings), `"warm_start":true`) {
				t.Fatalf("second run: %+v settings %s", runs[1], runs[1].Settings)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second run did not finish")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCancelQueued cancels a queued recompute.
func TestCancelQueued(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 10, 200, 3, 2))
	web, err := recompute.New(pool, store, recompute.Config{}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Cancel(ctx, st.ID); err != recompute.ErrNothingToCancel {
		t.Fatalf("cancel with nothing queued: %v", err)
	}
	if _, _, err := web.Enqueue(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := web.Cancel(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if state, _, err := web.Pending(ctx, st.ID); err != nil || state != "" {
		t.Fatalf("after cancel: %q %v", state, err)
	}
}

// TestCancelRunning cancels a running recompute through River: the run
// ends as cancelled and stores no result.
func TestCancelRunning(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 150, 40000, 20, 2))
	jobs := startWorker(t, pool, store)
	// A run can finish before the cancel reaches it on a busy machine; that
	// race is not a failure, so try a few times. If cancelling never works,
	// every attempt ends "done" and the test fails.
	for attempt := 1; ; attempt++ {
		if _, _, err := jobs.Enqueue(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		var running *study.Run
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			r, err := store.LatestRun(ctx, st.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r != nil && r.Status == study.RunRunning {
				running = r
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("never saw the run running: %+v", r)
			}
		}
		if err := jobs.Cancel(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		r := waitRun(t, store, st.ID)
		if r.ID != running.ID {
			t.Fatalf("waited for run %d, got run %d", running.ID, r.ID)
		}
		if r.Status == study.RunCancelled {
			if blob, err := store.RunResult(ctx, r.ID); err != nil || len(blob) != 0 {
				t.Fatalf("a cancelled run left a result (%d bytes, %v)", len(blob), err)
			}
			return
		}
		if r.Status != study.RunDone || attempt == 3 {
			t.Fatalf("attempt %d: status %s (%s), want cancelled", attempt, r.Status, r.Error)
		}
		t.Logf("attempt %d: the run finished before the cancel reached it; again", attempt)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			state, _, err := jobs.Pending(ctx, st.ID)
			if err != nil {
				t.Fatal(err)
			}
			if state == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the finished job stays %q", state)
			}
		}
	}
}

// TestExclusion excludes a participant: their answers stay stored, the run
// leaves them out, the CSV export too unless asked to include them, and
// their quality figures are still computed.
func TestExclusion(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 12, 400, 4, 3))
	// The participant with most answers (of the 4 who answered).
	var victim struct {
		PublicID string
		Answers  int
	}
	var total int
	if err := pool.QueryRow(ctx, `
		SELECT p.public_id, count(*), count(*) OVER () FROM answers a JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 GROUP BY p.id ORDER BY count(*) DESC, p.id LIMIT 1`, st.ID).Scan(&victim.PublicID, &victim.Answers, &total); err != nil || total != 4 {
		t.Fatal(total, err)
	}
	if err := store.SetExcluded(ctx, st.ID, victim.PublicID, true); err != nil {
		t.Fatal(err)
	}
	if err := store.SetExcluded(ctx, st.ID, "nobody", true); collect.KindOf(err) != study.KindNotFound {
		t.Fatalf("unknown participant: %v", err)
	}
	if _, err := recompute.Run(ctx, store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	run, blob, err := store.LatestResult(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Answers != 400-victim.Answers {
		t.Fatalf("run used %d answers, want %d", run.Answers, 400-victim.Answers)
	}
	res, _ := recompute.Decode(blob)
	found := false
	for _, p := range res.Participants {
		found = found || (p.PublicID == victim.PublicID && p.Answers == victim.Answers)
	}
	if !found {
		t.Fatal("the excluded participant has no quality figures")
	}
	rowsOf := func(include bool) [][]string {
		var b bytes.Buffer
		if err := store.ExportCSVWith(ctx, st.ID, &b, include); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs[1:]
	}
	without, with := rowsOf(false), rowsOf(true)
	if len(without) != 400-victim.Answers || len(with) != 400 {
		t.Fatalf("export rows: %d without, %d with excluded", len(without), len(with))
	}
	for _, r := range without {
		if r[2] == victim.PublicID {
			t.Fatal("an excluded answer was exported")
		}
	}
	// Included again: every answer counts.
	if err := store.SetExcluded(ctx, st.ID, victim.PublicID, false); err != nil {
		t.Fatal(err)
	}
	if got := len(rowsOf(false)); got != 400 {
		t.Fatalf("after including again: %d rows", got)
	}
}

// TestDueStudies: an open study with answers and no run is due; right
// after a run it is not.
func TestDueStudies(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	ctx := context.Background()
	st := importStudy(t, store, "synth", synthCSV(t, 10, 200, 3, 4))
	due := func() bool {
		ids, err := store.DueStudies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids) == 1 && ids[0] == st.ID
	}
	if due() {
		t.Fatal("a draft study is due")
	}
	// Label-only studies cannot be opened through the store; force it.
	if _, err := pool.Exec(ctx, `UPDATE studies SET status = 'open' WHERE id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	if !due() {
		t.Fatal("an open study with answers and no run is not due")
	}
	if _, err := recompute.Run(ctx, store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	if due() {
		t.Fatal("due right after a run")
	}
}
