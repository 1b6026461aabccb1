package collect_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestBasisCrowdThroughStore runs a whole basis study through two stores
// ("replicas") with M participants answering at once (goroutines, each
// answering as soon as it gets a question), and reports the fallback share
// next to basis.Run's with M annotators in lock step. It checks that no
// comparison was handed out more often than repeats allows and that the
// scheme finished. It takes minutes, so it runs only with CLOSER_DESIGN_CROWD
// set to the number of points (e.g. 100); CLOSER_DESIGN_CROWD_M sets M
// (default 50):
//
//	CLOSER_DESIGN_CROWD=100 go test ./internal/collect -run TestBasisCrowdThroughStore -v
func TestBasisCrowdThroughStore(t *testing.T) {
	t.Parallel()
	n, _ := strconv.Atoi(os.Getenv("CLOSER_DESIGN_CROWD"))
	if n < 3 {
		t.Skip("set CLOSER_DESIGN_CROWD to a number of points to run a whole basis study through the store")
	}
	m := 50
	if v, err := strconv.Atoi(os.Getenv("CLOSER_DESIGN_CROWD_M")); err == nil && v > 0 {
		m = v
	}
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	a, _ := designStore(pool)
	b, _ := designStore(pool)
	// 3dgmm as in the basis reproductions: basis.Blobs with make_blobs' defaults.
	x, _ := triplet.Blobs(triplet.NewRand(1), n, 3, 3, 1, 10)
	cfg := study.DesignConfig{Seed: 1, Repeats: 1}
	st := designStudy(t, a, "crowd", study.DesignBasis, cfg, n, 1000)
	o := triplet.NewOracle(x, 0, 1)
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, m)
	start := time.Now()
	for i := range m {
		wg.Go(func() {
			s := a
			if i%2 == 1 {
				s = b
			}
			for !done.Load() {
				p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("p", i), nil)
				if err != nil {
					errs <- err
					return
				}
				for !done.Load() {
					pr, err := s.Next(ctx, p.ID)
					if err != nil {
						errs <- err
						return
					}
					if pr.Done {
						break
					}
					q := pr.Question
					if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
						errs <- err
						return
					}
					if q.Design == study.DesignBasis {
						var fin bool
						if err := pool.QueryRow(ctx, `SELECT (progress->>'done')::bool FROM design_states WHERE study_id = $1`,
							st.ID).Scan(&fin); err != nil {
							errs <- err
							return
						}
						if fin {
							done.Store(true)
						}
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	var over, designAnswers, fallbacks int
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT 1 FROM questions WHERE study_id = $1 AND design = $2
			GROUP BY anchor, least(left_idx, right_idx), greatest(left_idx, right_idx) HAVING count(*) > $3) x`,
		st.ID, study.DesignBasis, cfg.Repeats).Scan(&over); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE q.design = $2), count(*) FILTER (WHERE q.design = $3)
		FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.study_id = $1`,
		st.ID, study.DesignBasis, study.DesignFallback).Scan(&designAnswers, &fallbacks); err != nil {
		t.Fatal(err)
	}
	d, err := a.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sc := d.(*basis.Scheme)
	status, err := a.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	sim := basis.New(n, basis.Config{Seed: 1, Repeats: 1})
	rs := basis.Run(sim, triplet.NewOracle(x, 0, 1), m, 0)
	total := designAnswers + fallbacks
	t.Logf("n = %d, %d participants at once, 2 replicas: %d answers (%d design, %d fallback: share %.3f), d̂ = %d, done %v, %.0f s (%.1f answers/s)",
		n, m, total, designAnswers, fallbacks, float64(fallbacks)/float64(total), sc.DHat(), sc.Done(), elapsed.Seconds(), float64(total)/elapsed.Seconds())
	t.Logf("basis.Run, %d annotators in lock step: %d answers (%d design, fallback share %.3f), d̂ = %d",
		m, rs.Answers, rs.DesignAnswers, rs.FallbackShare(), sim.DHat())
	// No lease expired, so every answer to a design question was wanted.
	if int64(designAnswers) != status.Recorded {
		t.Errorf("%d answers to design questions, %d recorded by the design", designAnswers, status.Recorded)
	}
	if over != 0 {
		t.Errorf("%d comparisons handed out more than %d times", over, cfg.Repeats)
	}
	if !sc.Done() {
		t.Errorf("the scheme did not finish")
	}
}
