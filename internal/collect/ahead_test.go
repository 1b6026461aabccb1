package collect_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A participant holds the question after their open one, issued one step
// ahead: asking again issues nothing, answering (in one round trip or with
// a plain answer and a Next) makes it the open question and issues the one
// after it, answering it out of turn is refused, and the last question has
// none ahead, so a finished participant was issued exactly their questions.
func TestQuestionHeldAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st := designStudy(t, s, "ahead", study.DesignRandom, study.DesignConfig{}, 8, 5)
	p, pr := firstQuestion(t, s, st.ID)
	if pr.Question == nil || pr.Ahead == nil || pr.Ahead.ID == pr.Question.ID || sameComparison(pr.Question, pr.Ahead) {
		t.Fatalf("first: question %+v, ahead %+v; want two different comparisons", pr.Question, pr.Ahead)
	}
	again, err := s.Next(ctx, p.ID)
	if err != nil || again.Question.ID != pr.Question.ID || again.Ahead == nil || again.Ahead.ID != pr.Ahead.ID ||
		again.Ahead.Anchor != pr.Ahead.Anchor || again.Ahead.Options[0] != pr.Ahead.Options[0] {
		t.Fatalf("asking again: %+v %v; want the same two questions", again, err)
	}
	if n := countQuestions(t, pool, st.ID); n != 2 {
		t.Fatalf("%d questions issued, want 2", n)
	}
	// The question ahead cannot be answered before the open one.
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Ahead.ID, Closer: pr.Ahead.Options[0].Index}); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("answering the question ahead first: %v", err)
	}
	for i := 0; i < 5; i++ {
		want := pr.Ahead
		var next study.Progress
		if i%2 == 0 {
			_, next, err = s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index})
		} else {
			if _, err = s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[1].Index}); err == nil {
				next, err = s.Next(ctx, p.ID)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 4:
			if !next.Done || next.Question != nil || next.Ahead != nil {
				t.Fatalf("after the last answer: %+v", next)
			}
		case next.Question == nil || next.Question.ID != want.ID:
			t.Fatalf("answer %d: next question %+v, want the one held ahead %+v", i+1, next.Question, want)
		case i == 3 && next.Ahead != nil:
			t.Fatalf("the last question has a question ahead: %+v", next.Ahead)
		case i < 3 && (next.Ahead == nil || sameComparison(next.Ahead, next.Question)):
			t.Fatalf("answer %d: ahead %+v", i+1, next.Ahead)
		}
		pr = next
	}
	if n := countQuestions(t, pool, st.ID); n != 5 {
		t.Fatalf("%d questions issued to a participant of 5, want 5", n)
	}
}

// A landmark study holds a design comparison ahead, on lease like the open
// one; a basis study holds none ahead (its open comparisons depend on the
// answers just given).
func TestQuestionAheadByDesign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	lm := designStudy(t, s, "lm", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 3}, 10, 4)
	bs := designStudy(t, s, "bs", study.DesignBasis, study.DesignConfig{Seed: 1, Repeats: 1, Extra: true}, 10, 4)
	for _, c := range []struct {
		st    study.Study
		ahead bool
	}{{lm, true}, {bs, false}} {
		p, pr := firstQuestion(t, s, c.st.ID)
		if (pr.Ahead != nil) != c.ahead {
			t.Fatalf("%s: question ahead %+v", c.st.Design, pr.Ahead)
		}
		if !c.ahead {
			continue
		}
		var leases int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_leases WHERE participant_id = $1`, p.ID).Scan(&leases); err != nil {
			t.Fatal(err)
		}
		if pr.Ahead.Design != study.DesignLandmarkK1 || leases != 2 {
			t.Fatalf("landmark: ahead is a %s question, %d leases; want a design question and 2 leases", pr.Ahead.Design, leases)
		}
	}
}

// An answer taken while the study is paused makes the question held ahead
// the open one; it is the question the participant gets when the study
// opens again.
func TestQuestionAheadAcrossAPause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 8, 5)
	p, pr := firstQuestion(t, s, st.ID)
	if err := s.SetStudyStatus(ctx, st.ID, study.StatusPaused); err != nil {
		t.Fatal(err)
	}
	_, paused, err := s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index})
	if err != nil || paused.Question != nil || paused.Done {
		t.Fatalf("answer while paused: %+v %v", paused, err)
	}
	if err := s.SetStudyStatus(ctx, st.ID, study.StatusOpen); err != nil {
		t.Fatal(err)
	}
	back, err := s.Next(ctx, p.ID)
	if err != nil || back.Question == nil || back.Question.ID != pr.Ahead.ID || back.Ahead == nil {
		t.Fatalf("after the pause: %+v %v; want the question held ahead (%s) and a new one ahead", back, err, pr.Ahead.ID)
	}
}

// firstQuestion makes a new participant of the study and returns them
// with their first question.
func firstQuestion(t *testing.T, s *collect.Store, studyID int64) (study.Participant, study.Progress) {
	t.Helper()
	p, _, err := s.CreateParticipant(context.Background(), studyID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p, pr
}

func sameComparison(a, b *study.Question) bool {
	return a.Anchor.Index == b.Anchor.Index && min(a.Options[0].Index, a.Options[1].Index) == min(b.Options[0].Index, b.Options[1].Index) &&
		max(a.Options[0].Index, a.Options[1].Index) == max(b.Options[0].Index, b.Options[1].Index)
}

func countQuestions(t *testing.T, pool *pgxpool.Pool, studyID int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM questions WHERE study_id = $1`, studyID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
