package collect_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
)

// An MTurk study: the settings keep only what applies to MTurk and need no
// code; the worker's id is workerId and the assignment's parameters are
// kept with the participant, the latest assignment's when the same worker
// comes back; the example question's items are the study's first ones.
func TestMTurkPlatform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 2)
	in := collect.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 2, Status: collect.StatusOpen,
		Platform: collect.Platform{Kind: " mturk ", ScreenedOutCode: "SCREENED", IDParam: "dropped", ReturnURL: "https://dropped.example"}}
	up, err := s.UpdateStudy(ctx, st.ID, in)
	if want := (collect.Platform{Kind: collect.PlatformMTurk, ScreenedOutCode: "SCREENED"}); err != nil || up.Platform != want {
		t.Fatalf("stored %+v, %v; want %+v", up.Platform, err, want)
	}
	if got := up.Platform.IDParams(); !slices.Equal(got, []string{"workerId"}) {
		t.Errorf("id parameters %v", got)
	}
	if got := up.Platform.KeptParams(); !slices.Equal(got, []string{"assignmentId", "hitId", "turkSubmitTo"}) {
		t.Errorf("kept parameters %v", got)
	}
	if got := up.Platform.ReturnLink("CODE", "W1"); got != "" {
		t.Errorf("an MTurk participant is sent to %q; the last page posts to MTurk instead", got)
	}

	first := map[string]string{"assignmentId": "A1", "hitId": "H1", "turkSubmitTo": "https://workersandbox.mturk.com"}
	p, _, err := s.CreateParticipant(ctx, st.ID, "W1", first)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ParticipantPlatformParams(ctx, p.ID); err != nil || !maps.Equal(got, first) {
		t.Fatalf("kept %v, %v; want %v", got, err, first)
	}
	again := map[string]string{"assignmentId": "A2", "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"}
	p2, _, err := s.CreateParticipant(ctx, st.ID, "W1", again)
	if err != nil || p2.ID != p.ID || !p2.Resumed {
		t.Fatalf("the same worker: %+v, %v; want participant %d resumed", p2, err, p.ID)
	}
	if got, err := s.ParticipantPlatformParams(ctx, p.ID); err != nil || !maps.Equal(got, again) {
		t.Fatalf("kept %v, %v; want the latest assignment %v", got, err, again)
	}
	if _, err := s.ParticipantPlatformParams(ctx, p.ID+1000); collect.KindOf(err) != collect.KindUnauthorized {
		t.Errorf("an unknown participant: %v; want KindUnauthorized", err)
	}

	items, err := s.ExampleItems(ctx, st.ID, 3)
	if err != nil || len(items) != 3 || items[0].Index != 0 || items[2].Index != 2 || items[1].SHA256 == "" {
		t.Fatalf("example items %+v, %v; want items 0, 1, 2", items, err)
	}
}
