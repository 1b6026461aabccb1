package collect_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// trialAnswer is a noiseless crowd's answer to an odd-one-out or rank
// question over the points x: the item of the three farthest from the
// closest pair (odd-one-out), or the K references nearest the query, the
// nearest first (rank).
func trialAnswer(x *mat.Dense, q *study.Question) []int {
	d := func(a, b int) float64 { return floats.Distance(x.RawRowView(a), x.RawRowView(b), 2) }
	items := q.OptionIndices()
	if q.Format == study.FormatOddOneOut {
		i, j, k := items[0], items[1], items[2]
		switch min(d(i, j), d(i, k), d(j, k)) {
		case d(i, j):
			return []int{k}
		case d(i, k):
			return []int{j}
		}
		return []int{i}
	}
	sort.SliceStable(items, func(a, b int) bool { return d(q.Anchor.Index, items[a]) < d(q.Anchor.Index, items[b]) })
	return items[:q.Choose]
}

// trialKey is the key a trial question is known by: its anchor, left and
// right (the question row's; the pool row's and the lease's).
func trialKey(s *collect.Store, id string) (triplet.Key, error) {
	var a, l, r int
	err := collect.PoolOf(s).QueryRow(context.Background(), `SELECT anchor, left_idx, right_idx FROM questions WHERE id = $1`, id).
		Scan(&a, &l, &r)
	return triplet.QuestionKey(a, l, r), err
}

// TestActiveTrialFormats: the active design of an odd-one-out and of a
// rank study (issue 27) through the store. The warm-up's questions are
// random trials of the format recorded as 'active' (their items stored,
// so that the page and the answer see a trial), the design recording
// exactly their answers; ApplyTrialPool installs a pool of trials whose
// rows hold their items; participants, answering concurrently, are then
// served the pool's trials (the same items, in a fresh order, with the
// format's size) each once, never twice to one participant, and fallbacks
// of the format once it is used up. Every answer is stored once and the
// design counts exactly the answers to its questions, its pool used up
// and no lease left. A pool whose trials do not show their keys' items is
// refused and changes nothing.
func TestActiveTrialFormats(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"odd-one-out", "rank:4:2"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, _ := pgtest.NewDB(t)
			s, _ := designStore(pool)
			const n, poolSize = 10, 6
			f := study.MustStudyFormat(format)
			st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "act", Title: "act", QuestionsPerParticipant: 12, Status: study.StatusOpen,
				Design: study.DesignActive, DesignConfig: study.DesignConfig{Seed: 5, Warmup: 1, Pool: poolSize}, Format: format})
			if err != nil {
				t.Fatal(err)
			}
			collect.InsertLabelItems(t, pool, st.ID, n)
			x := triplet.Gaussian(triplet.NewRand(4), n, 2, 1)
			checkShape := func(q *study.Question) {
				t.Helper()
				items := q.OptionIndices()
				if q.Format != f.Format || len(items) != f.Options() || q.Choose != f.Choices() || hasDup(items) {
					t.Fatalf("a %s question %+v", format, q)
				}
				if f.Format == study.FormatRank && slices.Contains(items, q.Anchor.Index) {
					t.Fatalf("a rank question shows its query among its references: %+v", q)
				}
			}
			answer := func(pid int64, q *study.Question) {
				t.Helper()
				checkShape(q)
				if _, err := s.Answer(ctx, pid, study.AnswerInput{QuestionID: q.ID, Choices: trialAnswer(x, q)}); err != nil {
					t.Fatal(err)
				}
			}

			// The warm-up: n answers to 'active' random trials.
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			for first := true; first || !activeState(t, s, st.ID).WarmedUp(); first = false {
				pr, err := s.Next(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if pr.Question.Design != study.DesignActive {
					t.Fatalf("a warm-up question of design %s", pr.Question.Design)
				}
				answer(p.ID, pr.Question)
				recorded(t, s)
			}
			if got, want := activeState(t, s, st.ID).Answered(), answersTo(t, pool, st.ID, study.DesignActive); got != want {
				t.Fatalf("the design recorded %d answers, %d were to its questions", got, want)
			}

			// A pool whose trial does not show its key's items is refused.
			var qs []active.Question
			var options [][]int
			rng := triplet.NewRand(9)
			seen := map[triplet.Key]bool{}
			for len(qs) < poolSize {
				var k triplet.Key
				var o []int
				if f.Format == study.FormatOddOneOut {
					a, b, c := triplet.RandomQuestion(rng, n)
					o = []int{a, b, c}
					k = triplet.QuestionKey(a, b, c)
				} else {
					q := rng.IntN(n)
					for len(o) < f.Rank.N {
						if v := rng.IntN(n); v != q && !slices.Contains(o, v) {
							o = append(o, v)
						}
					}
					k = triplet.QuestionKey(q, o[0], o[1])
				}
				if !seen[k] {
					seen[k] = true
					qs, options = append(qs, active.Question{Key: k, Score: float64(poolSize - len(qs))}), append(options, o)
				}
			}
			bad := slices.Clone(options)
			bad[2] = slices.Clone(bad[2])
			bad[2][0] = bad[2][1]
			if err := s.ApplyTrialPool(ctx, st.ID, 0, qs, bad); err == nil {
				t.Fatal("a trial repeating an item was installed")
			}
			if rows := poolRows(t, pool, st.ID); len(rows) != 0 || activeState(t, s, st.ID).Refreshes() != 0 {
				t.Fatalf("a refused pool left %v", rows)
			}
			if err := s.ApplyTrialPool(ctx, st.ID, 0, qs, options); err != nil {
				t.Fatal(err)
			}
			var stored int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_pool WHERE study_id = $1 AND cardinality(options) = $2`,
				st.ID, f.Options()).Scan(&stored); err != nil || stored != poolSize {
				t.Fatalf("%d pool rows hold their trial's items, want %d (%v)", stored, poolSize, err)
			}
			byKey := map[triplet.Key][]int{}
			for i, q := range qs {
				byKey[q.Key] = options[i]
			}

			// Five participants at once, six questions each: the pool's six
			// trials go once each, then fallbacks of the format.
			var mu sync.Mutex
			served := map[triplet.Key]int{}
			fallbacks := 0
			var wg sync.WaitGroup
			errs := make(chan error, 5)
			for w := range 5 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					np, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprintf("w%d", w), nil)
					if err != nil {
						errs <- err
						return
					}
					for range 6 {
						pr, err := s.Next(ctx, np.ID)
						if err != nil {
							errs <- err
							return
						}
						q := pr.Question
						if q.Format != f.Format || len(q.OptionIndices()) != f.Options() {
							errs <- fmt.Errorf("question %+v", q)
							return
						}
						k, err := trialKey(s, q.ID)
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						switch q.Design {
						case study.DesignActive:
							want, ok := byKey[k]
							got := q.OptionIndices()
							if ok {
								w, g := slices.Clone(want), slices.Clone(got)
								slices.Sort(w)
								slices.Sort(g)
								ok = slices.Equal(w, g) && (f.Format != study.FormatRank || q.Anchor.Index == k.Anchor)
							}
							if !ok {
								mu.Unlock()
								errs <- fmt.Errorf("pool question %v shows %v (query %d), the pool's trial %v", k, got, q.Anchor.Index, want)
								return
							}
							served[k]++
						case study.DesignFallback:
							fallbacks++
						}
						mu.Unlock()
						if _, err := s.Answer(ctx, np.ID, study.AnswerInput{QuestionID: q.ID, Choices: trialAnswer(x, q)}); err != nil {
							errs <- err
							return
						}
						// The same answer again stores nothing.
						if created, err := s.Answer(ctx, np.ID, study.AnswerInput{QuestionID: q.ID, Choices: trialAnswer(x, q)}); err != nil || created {
							errs <- fmt.Errorf("answered again: created %v, %v", created, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			recorded(t, s)
			if len(served) != poolSize || fallbacks == 0 {
				t.Fatalf("served %v of the pool (want each of %d once), %d fallbacks", served, poolSize, fallbacks)
			}
			for k, c := range served {
				if c != 1 {
					t.Fatalf("pool trial %v served %d times", k, c)
				}
			}
			d := activeState(t, s, st.ID)
			if d.PoolLeft() != 0 || d.Answered() != answersTo(t, pool, st.ID, study.DesignActive) {
				t.Fatalf("the design recorded %d answers, %d left in its pool; %d answers to its questions",
					d.Answered(), d.PoolLeft(), answersTo(t, pool, st.ID, study.DesignActive))
			}
			var questions, answers, leases, twice int
			if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM questions q WHERE study_id = $1
					AND EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id)),
				(SELECT count(*) FROM answers WHERE study_id = $1),
				(SELECT count(*) FROM design_leases WHERE study_id = $1),
				(SELECT count(*) FROM (SELECT 1 FROM answers WHERE study_id = $1 GROUP BY question_id HAVING count(*) > 1) x)`, st.ID).
				Scan(&questions, &answers, &leases, &twice); err != nil {
				t.Fatal(err)
			}
			if answers != questions || twice != 0 || leases != 0 {
				t.Fatalf("%d answers to %d questions, %d answered twice, %d leases left", answers, questions, twice, leases)
			}
		})
	}
}

func hasDup(xs []int) bool {
	for i, v := range xs {
		if slices.Contains(xs[i+1:], v) {
			return true
		}
	}
	return false
}
