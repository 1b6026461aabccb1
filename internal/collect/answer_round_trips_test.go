package collect_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// roundTrips counts what a connection sends the server: a query on its
// own and a batch are one round trip each (a batch's statements travel
// together).
type roundTrips struct{ queries, batches atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.queries.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.batches.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) take() (queries, batches int64) {
	return r.queries.Swap(0), r.batches.Swap(0)
}

// tracedStore is a store on a one-connection pool of pool's database
// whose round trips r counts.
func tracedStore(t *testing.T, pool *pgxpool.Pool, r *roundTrips) *collect.Store {
	t.Helper()
	cfg := pool.Config()
	cfg.MaxConns, cfg.MinConns = 1, 0
	cfg.ConnConfig.Tracer = r
	traced, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	return collect.New(traced)
}

// An answer with its next question (AnswerNext), the web's path for every
// answer, costs three round trips once the connection's statements are
// prepared: the batch that begins the transaction and locks the question's
// participant, the batch of the answer's writes with the next question's
// issue and the participant's hold on it, and the commit. A plain Answer
// costs as many (its batch issues nothing), and so does a skip.
func TestAnswerRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	setup := collect.New(pool)
	// 300 items: a random question is a blind draw that a repeat sends to
	// the slow path (more queries); among 13.4 million comparisons the 18
	// draws below repeat with a chance below 1e-5 (with 12 items, 660
	// comparisons, it happened in a make test run).
	random := designStudy(t, setup, "trips-random", study.DesignRandom, study.DesignConfig{}, 300, 40)
	skips, err := setup.CreateStudy(ctx, study.StudyInput{Slug: "trips-skips", Title: "trips-skips", QuestionsPerParticipant: 40,
		Status: study.StatusOpen, Quality: study.QualityControl{CantDecide: true}})
	if err != nil {
		t.Fatal(err)
	}
	collect.InsertLabelItems(t, pool, skips.ID, 300)

	var r roundTrips
	s := tracedStore(t, pool, &r)
	for _, c := range []struct {
		name    string
		studyID int64
		next    bool
		skip    bool
	}{
		{"AnswerNext", random.ID, true, false},
		{"Answer", random.ID, false, false},
		{"skip", skips.ID, true, true},
	} {
		p, pr := firstQuestion(t, s, c.studyID)
		q := pr.Question
		for i := range 6 {
			in := study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index, Skip: c.skip}
			r.take()
			if c.next {
				_, pr, err = s.AnswerNext(ctx, p.ID, in)
			} else {
				_, err = s.Answer(ctx, p.ID, in)
			}
			queries, batches := r.take()
			if err != nil {
				t.Fatal(err)
			}
			// The first answers prepare the connection's statements.
			if i >= 3 && (queries != 1 || batches != 2) {
				t.Errorf("%s %d: %d queries and %d batches; want the commit and two batches", c.name, i, queries, batches)
			}
			if !c.next {
				if pr, err = s.Next(ctx, p.ID); err != nil {
					t.Fatal(err)
				}
			}
			if q = pr.Question; q == nil {
				t.Fatalf("%s %d: no next question", c.name, i)
			}
		}
	}
}
