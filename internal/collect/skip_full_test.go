package collect

import (
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A skipped question gives its comparison back to the design only when it
// was the design's own: its skip ends the "design seems full" hint (the
// next question tries a claim again), a skipped fallback leaves the hint
// as it was (it held no slot of the design).
func TestSkipClearsFullOnlyForDesignQuestions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	ds := RegisterDesigns(s)[study.DesignLandmarkK1]
	ds.FullFor = time.Hour
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "skips", Title: "skips", QuestionsPerParticipant: 10,
		Status: study.StatusOpen, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, Landmarks: 3, Repeats: 5},
		Quality: study.QualityControl{CantDecide: true}})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, pool, st.ID, 6)
	key := armKey{st.ID, 0}
	markFull := func() {
		ds.mu.Lock()
		ds.full[key] = time.Now()
		ds.mu.Unlock()
	}
	// skipFirst: a new participant's first question, of design want,
	// skipped after mark (if any) runs.
	skipFirst := func(want string, mark func()) {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Question == nil || pr.Question.Design != want {
			t.Fatalf("question %+v; want one of design %q", pr.Question, want)
		}
		if mark != nil {
			mark()
		}
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Skip: true}); err != nil {
			t.Fatal(err)
		}
	}

	markFull()
	skipFirst(study.DesignFallback, nil) // served at once as the design seems full
	if !ds.seemsFull(key) {
		t.Error("a skipped fallback question cleared the design's full hint")
	}
	ds.clearFull(key)
	skipFirst(study.DesignLandmarkK1, markFull) // the design's question, issued while it had free slots
	if ds.seemsFull(key) {
		t.Error("a skipped design question kept the design's full hint")
	}
}
