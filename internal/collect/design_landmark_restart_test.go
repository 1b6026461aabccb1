package collect_test

import (
	"context"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// landmarkRun is what a landmark study leaves behind after a fixed crowd.
type landmarkRun struct {
	asked    []triplet.Key     // the comparison of every design question, in the order taken
	events   []triplet.Triplet // design_events in order
	counts   []int             // the design's answer count per comparison slot
	progress landmark.Progress
	restores int64
}

// runLandmarkCrowd drives a landmark study through the store with a
// simulated crowd (crashingReplica, m participants a round) for rounds
// rounds. A crashing run also snapshots every 7 answers, so restores replay
// from intermediate snapshots.
func runLandmarkCrowd(t *testing.T, name string, cfg study.DesignConfig, n, m, rounds int, crashSeed uint64) landmarkRun {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	r := newCrashingReplica(t, pool, name, crashSeed, 0.1, 7)
	st := designStudy(t, r.s, "lm", name, cfg, n, 1)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(12), n, 2, 1), 0, 1)
	var run landmarkRun
	for range rounds {
		for _, q := range r.round(st, m, o) {
			if q.Design == name { // random fallbacks are not the design's
				run.asked = append(run.asked, triplet.KeyOf(triplet.Triplet{Anchor: q.Anchor.Index, Closer: q.Options[0].Index, Farther: q.Options[1].Index}))
			}
		}
	}
	run.restores = r.finish(4)

	// The state as a fresh process rebuilds it from PostgreSQL.
	fresh, _ := designStore(pool)
	d, err := fresh.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	lm := d.(*landmark.Design)
	run.progress = lm.Progress()
	for i := range lm.Slots() {
		run.counts = append(run.counts, lm.Count(i))
	}
	run.events = designEvents(t, pool, st.ID)
	return run
}

// The landmark designs, stopped at random points (caches dropped, or a
// fresh Store as a restarted replica) with questions out on lease, ask the
// same comparisons, record the same answers and end in the same state as
// an uninterrupted run with the same seed and crowd (issue 12: this was
// tested for the basis design only).
func TestLandmarkDesignsSurviveRestarts(t *testing.T) {
	t.Parallel()
	for _, name := range []string{study.DesignLandmarkK1, study.DesignLandmarkK2} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// 10 items, 3 landmarks, 2 repeats, 90 questions: k1 (24
			// comparisons, 48 answers) crosses its second level and ends,
			// then serves random fallbacks; k2 (45 comparisons, 90 answers)
			// ends with the last answer.
			cfg := study.DesignConfig{Seed: 4, Landmarks: 3, Repeats: 2}
			const n, m, rounds = 10, 5, 18
			want := runLandmarkCrowd(t, name, cfg, n, m, rounds, 0)
			if want.progress.Answered == 0 || len(want.events) == 0 {
				t.Fatalf("uninterrupted run recorded nothing: %+v", want.progress)
			}
			t.Logf("uninterrupted: %+v", want.progress)
			got := runLandmarkCrowd(t, name, cfg, n, m, rounds, 21)
			if got.restores <= want.restores {
				t.Errorf("%d restores from PostgreSQL, uninterrupted %d: the caches were not dropped", got.restores, want.restores)
			}
			if !slices.Equal(got.asked, want.asked) {
				t.Errorf("the design's questions differ from the uninterrupted run's:\n%v\n%v", got.asked, want.asked)
			}
			if !slices.Equal(got.events, want.events) {
				t.Errorf("%d recorded design answers differ from the uninterrupted run's %d", len(got.events), len(want.events))
			}
			if !slices.Equal(got.counts, want.counts) {
				t.Errorf("answer counts per comparison differ: %v, uninterrupted %v", got.counts, want.counts)
			}
			if got.progress != want.progress {
				t.Errorf("progress %+v, uninterrupted %+v", got.progress, want.progress)
			}
		})
	}
}
