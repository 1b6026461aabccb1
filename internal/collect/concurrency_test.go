package collect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// Many simultaneous requests for one participant (double clicks, several
// tabs) still give one open question and one stored answer.
func TestConcurrentNextAndAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 10, 5)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			pr, err := s.Next(ctx, p.ID)
			errs[i] = err
			if err == nil {
				ids[i] = pr.Question.ID
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("concurrent next %d: %q %v, want %q", i, ids[i], errs[i], ids[0])
		}
	}
	pr, _ := s.Next(ctx, p.ID)
	created := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			created[i], errs[i] = s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index})
		})
	}
	wg.Wait()
	nc := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent answer %d: %v", i, errs[i])
		}
		if created[i] {
			nc++
		}
	}
	stats, _ := s.StudyStats(ctx, st.ID)
	if nc != 1 || stats.Answers != 1 {
		t.Fatalf("%d answers reported created, %d stored; want 1 and 1", nc, stats.Answers)
	}
}
