package dashboard_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// The tally cache's settings, the dashboard's.
const (
	timeBuckets = 48
	rtBins      = 30
	topContra   = 12
)

// The cache advances a study's tally over new answers (the same tally, now
// counting them, with the figures of a tally counted from scratch) and counts it
// again from scratch when a participant is excluded or included again.
func TestTallyCacheAdvancesAndExclusionInvalidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	st, err := store.CreateStudy(ctx, study.StudyInput{Slug: "c", Title: "C", QuestionsPerParticipant: 50, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.AddItems(ctx, st.ID, demo.Items()[:6]); err != nil {
		t.Fatal(err)
	}
	var people []study.Participant
	answer := func(n int) {
		t.Helper()
		for i := range n {
			p := people[i%len(people)]
			pr, err := store.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				continue
			}
			ms := 700 + 37*i
			if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index, ResponseMS: &ms}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 3 {
		p, _, err := store.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, p)
	}
	c := dashboard.NewTallyCache(store, topContra)
	// current returns the cache's tally and its figures after a load.
	current := func() (*dashboard.Tally, study.Stats, dashboard.Figures) {
		t.Helper()
		ver, err := store.DashboardVersion(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		var tally *dashboard.Tally
		var s study.Stats
		var f dashboard.Figures
		if err := c.With(ctx, st.ID, ver.Structure, func(x *dashboard.Tally) error {
			tally = x
			s, f = x.Figures(timeBuckets, rtBins)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return tally, s, f
	}
	answer(7)
	first, _, _ := current()
	answer(11)
	second, s, f := current()
	if second != first {
		t.Fatal("new answers counted the tally again from scratch; want it advanced")
	}
	counts, err := store.DashboardCounts(ctx, st.ID, topContra)
	if err != nil {
		t.Fatal(err)
	}
	wantS, wantF := dashboard.NewTally(counts, topContra).Figures(timeBuckets, rtBins)
	if s.Answers != 18 || s.Answers != wantS.Answers || s.Comparisons != wantS.Comparisons || s.Contradictions != wantS.Contradictions ||
		math.Abs(f.MedianResponseMS-wantF.MedianResponseMS) > 0 || len(f.Contradicted) != len(wantF.Contradicted) {
		t.Fatalf("advanced %+v %+v; from scratch %+v %+v", s, f, wantS, wantF)
	}
	for i := range wantF.ResponseHist {
		if f.ResponseHist[i] != wantF.ResponseHist[i] {
			t.Fatalf("response histogram %v, from scratch %v", f.ResponseHist, wantF.ResponseHist)
		}
	}
	if err := store.SetExcluded(ctx, st.ID, people[0].PublicID, true); err != nil {
		t.Fatal(err)
	}
	third, s3, _ := current()
	if third == second || s3.Answers != 18 {
		t.Fatalf("after an exclusion: same tally %v, %d answers; want a new count of 18", third == second, s3.Answers)
	}
	if err := store.SetExcluded(ctx, st.ID, people[0].PublicID, false); err != nil {
		t.Fatal(err)
	}
	if fourth, _, _ := current(); fourth == third {
		t.Fatal("including again kept the tally; want a new count")
	}
}

// countingSource is the real store, counting the tallies it counts from
// scratch per study.
type countingSource struct {
	dashboard.TallySource
	counted map[int64]int
}

func (c *countingSource) DashboardCounts(ctx context.Context, studyID int64, top int) (study.DashboardCounts, error) {
	c.counted[studyID]++
	return c.TallySource.DashboardCounts(ctx, studyID, top)
}

// The cache keeps the studies used last: past its bound the least recently
// used study's tally goes, not every tally at once (before issue 25 the
// map was cleared when full, so the 65th study cost every other study its
// tally).
func TestTallyCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	src := &countingSource{TallySource: store, counted: map[int64]int{}}
	c := dashboard.NewTallyCache(src, topContra)
	var ids []int64
	for i := range 65 { // cachedTallies + 1
		st, err := store.CreateStudy(ctx, study.StudyInput{Slug: fmt.Sprintf("s%d", i), Title: "S", QuestionsPerParticipant: 5})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID)
	}
	use := func(id int64) {
		t.Helper()
		if _, err := c.Stats(ctx, id, "structure"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[:64] {
		use(id)
	}
	use(ids[0])  // the first study is now the most recently used
	use(ids[64]) // the 65th pushes out the least recently used: the second
	use(ids[0])
	use(ids[1])
	if n := src.counted[ids[0]]; n != 1 {
		t.Errorf("the study used last was counted %d times, want 1 (kept)", n)
	}
	if n := src.counted[ids[1]]; n != 2 {
		t.Errorf("the least recently used study was counted %d times, want 2 (evicted, then counted again)", n)
	}
}
