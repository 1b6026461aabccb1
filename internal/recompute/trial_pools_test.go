package recompute_test

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// trialChoices is an error-free annotator's answer to an odd-one-out or
// rank question over the points x.
func trialChoices(x *mat.Dense, q *study.Question) []int {
	items := q.OptionIndices()
	if q.Format == study.FormatOddOneOut {
		i, j, k := items[0], items[1], items[2]
		dij, dik, djk := triplet.SqDist(x, i, j), triplet.SqDist(x, i, k), triplet.SqDist(x, j, k)
		switch min(dij, dik, djk) {
		case dij:
			return []int{k}
		case dik:
			return []int{j}
		}
		return []int{i}
	}
	a := q.Anchor.Index
	sort.SliceStable(items, func(u, v int) bool { return triplet.SqDist(x, a, items[u]) < triplet.SqDist(x, a, items[v]) })
	return items[:q.Choose]
}

// TestActiveTrialPoolRefreshedByRun: the active design of an odd-one-out
// and of a rank study (issue 27) in the app. After the warm-up a
// recompute's run refreshes the pool from the answers (a t-STE fit of
// the triplets they derive, trialactive's choice): design_pool holds the
// pool's trials in the pool's order, each with the format's number of
// items, most uncertain first; the next participants are served those
// trials; once they are answered the next run installs a new pool.
func TestActiveTrialPoolRefreshedByRun(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"odd-one-out", "rank:5:2"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, _ := pgtest.NewDB(t)
			store := collect.New(pool)
			collect.RegisterDesigns(store)
			const n, poolSize = 12, 8
			f := study.MustStudyFormat(format)
			st, err := store.CreateStudy(ctx, study.StudyInput{Slug: "act", Title: "act", QuestionsPerParticipant: 6, Status: study.StatusOpen,
				Design: study.DesignActive, DesignConfig: study.DesignConfig{Seed: 3, Warmup: 2, Pool: poolSize}, Format: format})
			if err != nil {
				t.Fatal(err)
			}
			if _, rej, err := store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
				t.Fatal(rej, err)
			}
			if err := store.SetRecomputeSettings(ctx, st.ID, study.RecomputeSettings{MinNewAnswers: 100000, MaxAge: 30 * 24 * time.Hour,
				Method: "tste", Dim: 2}); err != nil {
				t.Fatal(err)
			}
			x := triplet.Gaussian(triplet.NewRand(21), n, 2, 1)
			state := func() *active.Design {
				t.Helper()
				if err := store.RecordPending(ctx); err != nil {
					t.Fatal(err)
				}
				d, err := store.DesignState(ctx, st.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				return d.(*active.Design)
			}
			// answerOne joins a participant who answers one question.
			answerOne := func() *study.Question {
				t.Helper()
				p, _, err := store.CreateParticipant(ctx, st.ID, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				pr, err := store.Next(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				q := pr.Question
				if q.Format != f.Format || len(q.OptionIndices()) != f.Options() {
					t.Fatalf("a %s study asked %+v", format, q)
				}
				if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: trialChoices(x, q)}); err != nil {
					t.Fatal(err)
				}
				return q
			}
			for answerOne(); !state().WarmedUp(); answerOne() {
			}
			run := func() recompute.Result {
				t.Helper()
				id, err := recompute.Run(ctx, store, st.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				blob, err := store.RunResult(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				res, err := recompute.Decode(blob)
				if err != nil {
					t.Fatal(err)
				}
				return *res
			}
			res := run()
			d := state()
			qs := d.Pool(nil)
			if len(res.Pools) != 1 || res.Pools[0].Error != "" || res.Pools[0].Questions != len(qs) || d.Refreshes() != 1 || len(qs) != poolSize {
				t.Fatalf("pools %+v; the design has %d refreshes, a pool of %d", res.Pools, d.Refreshes(), len(qs))
			}
			rows, err := pool.Query(ctx, `SELECT anchor, j, k, options FROM design_pool WHERE study_id = $1 AND arm = 0 AND wanted > 0
				ORDER BY band, prio`, st.ID)
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				k       triplet.Key
				options []int
			}
			var got []row
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.k.Anchor, &r.k.J, &r.k.K, &r.options); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if rows.Err() != nil || len(got) != len(qs) {
				t.Fatalf("design_pool %v (%v), pool %v", got, rows.Err(), qs)
			}
			byKey := map[triplet.Key][]int{}
			for i, q := range qs {
				r := got[i]
				if r.k != q.Key || len(r.options) != f.Options() || !slices.Contains(r.options, q.Key.J) || !slices.Contains(r.options, q.Key.K) {
					t.Fatalf("design_pool row %d is %+v, the pool's trial %v", i, r, q.Key)
				}
				if i > 0 && qs[i-1].Score < q.Score {
					t.Fatalf("trial %d's uncertainty %g after %g", i, q.Score, qs[i-1].Score)
				}
				byKey[q.Key] = r.options
			}
			// The next participants get the pool's trials.
			for range 3 {
				q := answerOne()
				var a, l, r int
				if err := pool.QueryRow(ctx, `SELECT anchor, left_idx, right_idx FROM questions WHERE id = $1`, q.ID).Scan(&a, &l, &r); err != nil {
					t.Fatal(err)
				}
				want, ok := byKey[triplet.QuestionKey(a, l, r)]
				if q.Design != study.DesignActive || !ok {
					t.Fatalf("after the refresh a %s question %v, not the pool's", q.Design, triplet.QuestionKey(a, l, r))
				}
				shown := slices.Clone(q.OptionIndices())
				w := slices.Clone(want)
				slices.Sort(shown)
				slices.Sort(w)
				if !slices.Equal(shown, w) {
					t.Fatalf("pool trial %v shows %v, its row %v", triplet.QuestionKey(a, l, r), q.OptionIndices(), want)
				}
			}
			// The next run refreshes it again, from the answers so far.
			res = run()
			if d := state(); len(res.Pools) != 1 || res.Pools[0].Error != "" || d.Refreshes() != 2 || res.Pools[0].Answers <= res.Pools[0].Questions {
				t.Fatalf("second run: pools %+v, %d refreshes", res.Pools, d.Refreshes())
			}
		})
	}
}
