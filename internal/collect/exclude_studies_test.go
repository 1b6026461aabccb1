package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// A study that names earlier studies refuses an external id that took part
// in one of them (KindForbidden, nothing stored), admits everyone else and
// anyone without an id, and lets back in an id that joined it before the
// list was set.
func TestExcludeEarlierStudies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, first := newStudy(t, 4, 3)
	if _, _, err := s.CreateParticipant(ctx, first.ID, "veteran", nil); err != nil {
		t.Fatal(err)
	}
	second, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s2", Title: "S2", QuestionsPerParticipant: 3, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	early, _, err := s.CreateParticipant(ctx, second.ID, "early", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateParticipant(ctx, first.ID, "early", nil); err != nil {
		t.Fatal(err)
	}
	in := study.StudyInput{Slug: "s2", Title: "S2", QuestionsPerParticipant: 3, Status: study.StatusOpen, ExcludeStudies: []int64{first.ID}}
	if _, err := s.UpdateStudy(ctx, second.ID, in); err != nil {
		t.Fatal(err)
	}
	if got, err := s.StudyBySlug(ctx, "s2"); err != nil || len(got.ExcludeStudies) != 1 || got.ExcludeStudies[0] != first.ID {
		t.Fatalf("stored list %v, %v", got.ExcludeStudies, err)
	}
	if _, tok, err := s.CreateParticipant(ctx, second.ID, "veteran", nil); collect.KindOf(err) != study.KindForbidden || tok != "" {
		t.Fatalf("an id from the earlier study: %v; want KindForbidden", err)
	}
	if _, _, err := s.CreateParticipant(ctx, second.ID, "newcomer", nil); err != nil {
		t.Fatalf("a new id: %v", err)
	}
	if _, _, err := s.CreateParticipant(ctx, second.ID, "", nil); err != nil {
		t.Fatalf("no id: %v", err)
	}
	if again, _, err := s.CreateParticipant(ctx, second.ID, "early", nil); err != nil || again.ID != early.ID {
		t.Fatalf("an id that joined before the list was set: %+v, %v", again, err)
	}
	ps, err := s.ListParticipants(ctx, second.ID, 10)
	if err != nil || len(ps) != 3 {
		t.Fatalf("%d participants, %v; want 3 (early, newcomer, anonymous)", len(ps), err)
	}
}
