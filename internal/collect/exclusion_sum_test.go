package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// ExcludedWithAnswers sums the excluded participants who have answers the
// way ExclusionSum.Add does (the recompute adds them in Go): participants
// without answers and included ones stay out, and a different set with the
// same count and the same sum of ids gets a different checksum. The ids
// start past 2³² so that the hash is checked on large ids too.
func TestExcludedWithAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	if _, err := pool.Exec(ctx, `ALTER TABLE participants ALTER COLUMN id RESTART WITH 5000000001`); err != nil {
		t.Fatal(err)
	}
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: 5, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:6]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	var ps []study.Participant
	for i := range 5 {
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		if i == 4 {
			break // the last one never answers
		}
		for range 2 {
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ps[0].ID < 5000000001 || ps[3].ID != ps[0].ID+3 {
		t.Fatalf("participant ids %d..%d, want consecutive from 5000000001", ps[0].ID, ps[3].ID)
	}
	sumOf := func(idx ...int) study.ExclusionSum {
		var e study.ExclusionSum
		for _, i := range idx {
			e.Add(ps[i].ID)
		}
		return e
	}
	set := func(excluded ...int) {
		t.Helper()
		for i, p := range ps {
			in := false
			for _, j := range excluded {
				in = in || i == j
			}
			if err := s.SetExcluded(ctx, st.ID, p.PublicID, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.ExcludedWithAnswers(ctx, st.ID)
	if err != nil || got != (study.ExclusionSum{}) {
		t.Fatalf("nobody excluded: %+v, %v", got, err)
	}
	set(0, 3, 4) // 4 has no answers
	got, err = s.ExcludedWithAnswers(ctx, st.ID)
	if want := sumOf(0, 3); err != nil || got != want || got.Participants != 2 {
		t.Fatalf("0 and 3 (and 4 without answers) excluded: %+v, %v; want %+v", got, err, want)
	}
	set(1, 2) // the same count and the same sum of ids
	got2, err := s.ExcludedWithAnswers(ctx, st.ID)
	if want := sumOf(1, 2); err != nil || got2 != want {
		t.Fatalf("1 and 2 excluded: %+v, %v; want %+v", got2, err, want)
	}
	if got2 == got {
		t.Fatalf("{0, 3} and {1, 2} have the same sum %+v", got)
	}
}
