package collect

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// closeStudy is a landmark study of 6 items whose first participant was
// asked a question (the design's state exists): it returns the store, the
// study, the participant and the question.
func closeStudy(t *testing.T, pool *pgxpool.Pool, slug string) (*Store, study.Study, int64, *study.Question) {
	t.Helper()
	ctx := context.Background()
	s := New(pool)
	RegisterDesigns(s)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: 5,
		Status: study.StatusOpen, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, Landmarks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, pool, st.ID, 6)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Question == nil || pr.Question.Design != study.DesignLandmarkK1 {
		t.Fatalf("question %+v; want one of the design", pr.Question)
	}
	return s, st, p.ID, pr.Question
}

// blockWriter holds the study's design state locked, so that its writer's
// next pass waits inside its transaction, and answers q: it returns once
// the writer waits on the lock, with the transaction holding it.
func blockWriter(t *testing.T, pool *pgxpool.Pool, s *Store, st study.Study, participant int64, q *study.Question) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Rollback(ctx) })
	if _, err := lock.Exec(ctx, `SELECT 1 FROM design_states WHERE study_id = $1 FOR UPDATE`, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, participant, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	for {
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return lock
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// counts returns the study's answers waiting in its design's inbox and
// those its design recorded.
func counts(t *testing.T, pool *pgxpool.Pool, studyID int64) (inbox, events int) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM design_inbox WHERE study_id = $1),
		(SELECT count(*) FROM design_events WHERE study_id = $1)`, studyID).Scan(&inbox, &events); err != nil {
		t.Fatal(err)
	}
	return inbox, events
}

// Close waits for the writer pass in flight to commit, and no writer
// goroutine runs after it: an answer stored before Close is in the design
// when Close returns.
func TestCloseFinishesThePassInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, st, p, q := closeStudy(t, pool, "close-finishes")
	lock := blockWriter(t, pool, s, st, p, q)
	if n := s.background.running.Load(); n != 1 {
		t.Fatalf("%d goroutines running with the writer's pass waiting; want 1", n)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close(ctx) }()
	for !s.background.stopping() {
		time.Sleep(time.Millisecond)
	}
	if err := lock.Rollback(ctx); err != nil { // the pass goes on
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := s.background.running.Load(); n != 0 {
		t.Errorf("%d goroutines running after Close; want none", n)
	}
	if inbox, events := counts(t, pool, st.ID); inbox != 0 || events != 1 {
		t.Errorf("after Close: %d answers in the inbox, %d recorded; want the pass in flight to record its one", inbox, events)
	}
}

// A pass Close cancels (its context ended first) rolls back: its answer
// stays in the inbox, no writer starts after Close, and the next process
// records it once.
func TestCloseLeavesUncommittedAnswersForTheNextProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, st, p, q := closeStudy(t, pool, "close-leaves")
	lock := blockWriter(t, pool, s, st, p, q)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Close(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with its context ended: %v; want the passes in flight cancelled", err)
	}
	if n := s.background.running.Load(); n != 0 {
		t.Fatalf("%d goroutines running after Close; want none", n)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if inbox, events := counts(t, pool, st.ID); inbox != 1 || events != 0 {
		t.Fatalf("after a cancelled pass: %d answers in the inbox, %d recorded; want 1 and 0", inbox, events)
	}

	// Another answer after Close is stored, and no writer starts for it.
	p2, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, p2.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.background.running.Load(); n != 0 {
		t.Fatalf("%d goroutines running after Close and an answer; want none", n)
	}
	if inbox, events := counts(t, pool, st.ID); inbox != 2 || events != 0 {
		t.Fatalf("a closed store recorded answers: %d in the inbox, %d recorded; want 2 and 0", inbox, events)
	}

	next := New(pool)
	RegisterDesigns(next)
	if err := next.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	if inbox, events := counts(t, pool, st.ID); inbox != 0 || events != 2 {
		t.Errorf("the next process: %d answers in the inbox, %d recorded; want 0 and 2", inbox, events)
	}
	if err := next.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Start's sweep records the answers a closed process left, and Close
// stops it without waiting for its next tick.
func TestStartSweepsPendingAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, st, p, q := closeStudy(t, pool, "start-sweeps")
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, p, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	next := New(pool)
	RegisterDesigns(next)
	next.PendingEvery = time.Hour
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		if inbox, events := counts(t, pool, st.ID); inbox == 0 {
			if events != 1 {
				t.Fatalf("%d answers recorded; want 1", events)
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := next.Start(ctx); err == nil {
		t.Error("a store started twice")
	}
	if err := next.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := next.background.running.Load(); n != 0 {
		t.Errorf("%d goroutines running after Close; want none", n)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("a closed store started")
	}
}
