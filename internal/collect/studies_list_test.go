package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// ListStudies reads every study's counts in one query: they are the counts
// of StudyStats (separate SQL, one study at a time) and the ones given
// here, newest study first, without the studies being deleted.
func TestListStudiesCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	// Study i has items[i] items, people[i] participants, each of whom
	// answers answers[i] questions.
	items, people, answers := []int{5, 0, 4, 6}, []int{3, 2, 0, 1}, []int{2, 0, 0, 4}
	var ids []int64
	for i := range items {
		st, err := s.CreateStudy(ctx, study.StudyInput{Slug: string(rune('a' + i)), Title: "S", QuestionsPerParticipant: 10, Status: study.StatusOpen})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID)
		if items[i] > 0 {
			if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:items[i]]); err != nil || len(rej) > 0 {
				t.Fatal(rej, err)
			}
		}
		for range people[i] {
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			for range answers[i] {
				pr, err := s.Next(ctx, p.ID)
				if err != nil || pr.Done {
					t.Fatal(pr.Done, err)
				}
				if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The last study is being deleted: its rows stay until the purge.
	if err := s.MarkStudyDeleted(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListStudies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d studies listed, want 3: %+v", len(got), got)
	}
	for k, row := range got {
		i := 2 - k // newest first
		if row.Study.ID != ids[i] {
			t.Fatalf("row %d is study %d, want %d", k, row.Study.ID, ids[i])
		}
		if row.Items != items[i] || row.Participants != people[i] || row.Answers != people[i]*answers[i] {
			t.Errorf("study %d: %d items, %d participants, %d answers; want %d, %d, %d",
				i, row.Items, row.Participants, row.Answers, items[i], people[i], people[i]*answers[i])
		}
		st, err := s.StudyStats(ctx, row.Study.ID)
		if err != nil {
			t.Fatal(err)
		}
		if row.Items != st.Items || row.Participants != st.Participants || row.Answers != st.Answers {
			t.Errorf("study %d: listed %+v, StudyStats %+v", i, row, st)
		}
		if row.Study.Slug != string(rune('a'+i)) {
			t.Errorf("study %d: slug %q", i, row.Study.Slug)
		}
	}
}
