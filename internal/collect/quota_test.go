package collect_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A study with a participant limit admits people until that many completed
// or are in progress; a returning external id always gets back in; an idle
// participant frees their place; concurrent joins never take more places
// than there are.
func TestQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "q", Title: "Q", QuestionsPerParticipant: 1, Status: study.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:5]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 1, Status: study.StatusOpen,
		Quota: study.Quota{MaxParticipants: 2, IdleMinutes: 30}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	a, _, err := s.CreateParticipant(ctx, st.ID, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	// a completes: they keep their place.
	pr, err := s.Next(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, a.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	b, _, err := s.CreateParticipant(ctx, st.ID, "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := s.CreateParticipant(ctx, st.ID, "c", nil)
	if collect.KindOf(err) != study.KindFull || tok != "" {
		t.Fatalf("a third participant with a limit of 2: %v; want KindFull", err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "", nil); collect.KindOf(err) != study.KindFull {
		t.Fatalf("an anonymous third participant: %v; want KindFull", err)
	}
	if again, _, err := s.CreateParticipant(ctx, st.ID, "b", nil); err != nil || again.ID != b.ID {
		t.Fatalf("b returning to a full study: %+v, %v", again, err)
	}
	// b idles past 30 minutes: their place is free, and they can still
	// come back (over the limit: they had a place).
	if _, err := pool.Exec(ctx, `UPDATE participants SET last_active_at = now() - interval '31 minutes' WHERE id = $1`, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "c", nil); err != nil {
		t.Fatalf("c after b went idle: %v", err)
	}
	if again, _, err := s.CreateParticipant(ctx, st.ID, "b", nil); err != nil || again.ID != b.ID {
		t.Fatalf("b back after idling: %+v, %v", again, err)
	}
	// Without an idle time nobody's place is freed.
	in.Quota = study.Quota{MaxParticipants: 3}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE participants SET last_active_at = now() - interval '30 days' WHERE study_id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "d", nil); collect.KindOf(err) != study.KindFull {
		t.Fatalf("d with 3 places taken and no idle time: %v; want KindFull", err)
	}
}

// 12 people join a study with 5 places at once: exactly 5 get in.
func TestQuotaConcurrentJoins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 3)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: study.StatusOpen,
		Quota: study.Quota{MaxParticipants: 5}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 12)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = s.CreateParticipant(ctx, st.ID, fmt.Sprint("w", i), nil) })
	}
	wg.Wait()
	in5, full := 0, 0
	for _, err := range errs {
		switch collect.KindOf(err) {
		case 0:
			in5++
		case study.KindFull:
			full++
		default:
			t.Fatal(err)
		}
	}
	ps, err := s.ListParticipants(ctx, st.ID, 50)
	if err != nil || in5 != 5 || full != 7 || len(ps) != 5 {
		t.Fatalf("%d admitted, %d refused, %d stored (%v); want 5, 7, 5", in5, full, len(ps), err)
	}
}

// The limit and the idle time are checked on the form.
func TestQuotaSettingsChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 3)
	for _, q := range []study.Quota{{MaxParticipants: -1}, {MaxParticipants: 1_000_001}, {IdleMinutes: -1}, {IdleMinutes: 10081}} {
		_, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3,
			Status: study.StatusOpen, Quota: q})
		if collect.KindOf(err) != study.KindInvalid {
			t.Errorf("%+v: %v; want KindInvalid", q, err)
		}
	}
}

// A participant idle past the study's idle time frees their design
// question's comparison for others: the lease lasts the idle time when
// that is shorter than the scheduler's LeaseTTL (an expired lease is taken
// over, TestExpiredLeaseReturnsToPool).
func TestIdleTimeBoundsTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	for _, c := range []struct { //nolint:paralleltest // subtests share one store's leases
		idle int
		want float64 // seconds
	}{{0, collect.DefaultLeaseTTL.Seconds()}, {1, 60}, {30, collect.DefaultLeaseTTL.Seconds()}} {
		t.Run(fmt.Sprint("idle ", c.idle), func(t *testing.T) {
			st := designStudy(t, s, fmt.Sprint("idle", c.idle), study.DesignLandmarkK1, study.DesignConfig{Seed: 2, Landmarks: 3}, 8, 2)
			in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 2, Status: study.StatusOpen,
				Design: st.Design, DesignConfig: study.DesignConfig{Seed: 2, Landmarks: 3}, Quota: study.Quota{IdleMinutes: c.idle}}
			if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
				t.Fatal(err)
			}
			ids, qs := holdQuestions(t, s, st.ID, 1)
			if qs[0].Design != study.DesignLandmarkK1 {
				t.Fatalf("a %s question; want the design's", qs[0].Design)
			}
			var secs float64
			if err := pool.QueryRow(ctx, `SELECT min(extract(epoch FROM expires_at - leased_at)) FROM design_leases WHERE participant_id = $1`,
				ids[0]).Scan(&secs); err != nil {
				t.Fatal(err)
			}
			if math.Abs(secs-c.want) > 1 {
				t.Fatalf("the lease lasts %.1f s; want %.0f s", secs, c.want)
			}
		})
	}
}
