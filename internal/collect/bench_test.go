package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// BenchmarkNextAnswer measures one question round trip in the store: issue
// the next question (random design) and record its answer, each in its own
// transaction, for participants of 100 questions on the 40 demo items.
func BenchmarkNextAnswer(b *testing.B) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(b)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "bench", Title: "Bench", QuestionsPerParticipant: 100, Status: study.StatusOpen})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.AddItems(ctx, st.ID, demo.Items()); err != nil {
		b.Fatal(err)
	}
	benchRounds(b, s, st.ID, func(p study.Participant) {
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			b.Fatal(err)
		}
		q := pr.Question
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
			b.Fatal(err)
		}
	})
}
