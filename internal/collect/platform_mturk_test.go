package collect_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// An MTurk study: the settings keep only what applies to MTurk and need no
// code; the worker's id is workerId and the assignment's parameters are
// kept with the participant, the latest assignment's when the same worker
// comes back; the example question's items are the study's first ones.
func TestMTurkPlatform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 2)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 2, Status: study.StatusOpen,
		Platform: study.Platform{Kind: " mturk ", ScreenedOutCode: "SCREENED", IDParam: "dropped", ReturnURL: "https://dropped.example"}}
	up, err := s.UpdateStudy(ctx, st.ID, in)
	if want := (study.Platform{Kind: study.PlatformMTurk, ScreenedOutCode: "SCREENED"}); err != nil || up.Platform != want {
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
	if _, err := s.ParticipantPlatformParams(ctx, p.ID+1000); collect.KindOf(err) != study.KindUnauthorized {
		t.Errorf("an unknown participant: %v; want KindUnauthorized", err)
	}

	items, err := s.ExampleItems(ctx, st.ID, 3)
	if err != nil || len(items) != 3 || items[0].Index != 0 || items[2].Index != 2 || items[1].SHA256 == "" {
		t.Fatalf("example items %+v, %v; want items 0, 1, 2", items, err)
	}
}

// A worker who completed an MTurk study and joins with another assignment
// (another HIT of the study) is refused, on the landing page's question
// (CanJoin) and on joining, and their participant keeps the assignment
// they completed with no token added; the same assignment still resumes
// them. A worker who did not complete resumes on a new assignment, which
// is kept.
func TestMTurkCompletedWorkerKeepsTheAssignment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: 2, Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformMTurk}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.AddItems(ctx, st.ID, demo.Items()[:4])
	if err != nil {
		t.Fatal(err)
	}
	hit := func(assignment string) map[string]string {
		return map[string]string{"assignmentId": assignment, "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"}
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "W1", hit("A1"))
	if err != nil {
		t.Fatal(err)
	}
	finishQuestions(t, s, p.ID)
	if err := s.CanJoin(ctx, st, "W1", hit("A2")); !errors.Is(err, collect.ErrCompletedOtherAssignment) {
		t.Errorf("CanJoin on another assignment: %v; want ErrCompletedOtherAssignment", err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "W1", hit("A2")); !errors.Is(err, collect.ErrCompletedOtherAssignment) ||
		collect.KindOf(err) != study.KindConflict {
		t.Fatalf("joining on another assignment: %v; want ErrCompletedOtherAssignment", err)
	}
	if got, err := s.ParticipantPlatformParams(ctx, p.ID); err != nil || !maps.Equal(got, hit("A1")) {
		t.Fatalf("kept %v, %v; want the completed assignment %v", got, err, hit("A1"))
	}
	var tokens int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM participant_tokens`).Scan(&tokens); err != nil || tokens != 0 {
		t.Fatalf("%d tokens added by the refused join, %v", tokens, err)
	}
	if err := s.CanJoin(ctx, st, "W1", hit("A1")); err != nil {
		t.Errorf("CanJoin on the completed assignment: %v", err)
	}
	if again, _, err := s.CreateParticipant(ctx, st.ID, "W1", hit("A1")); err != nil || again.ID != p.ID || again.CompletedAt == nil {
		t.Fatalf("the completed assignment again: %+v, %v; want participant %d, completed", again, err, p.ID)
	}

	w2, _, err := s.CreateParticipant(ctx, st.ID, "W2", hit("A3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CanJoin(ctx, st, "W2", hit("A4")); err != nil {
		t.Errorf("CanJoin of a worker who did not complete, on a new assignment: %v", err)
	}
	if again, _, err := s.CreateParticipant(ctx, st.ID, "W2", hit("A4")); err != nil || again.ID != w2.ID {
		t.Fatalf("a worker who did not complete, on a new assignment: %+v, %v", again, err)
	}
	if got, err := s.ParticipantPlatformParams(ctx, w2.ID); err != nil || !maps.Equal(got, hit("A4")) {
		t.Fatalf("kept %v, %v; want the new assignment", got, err)
	}
}

// CanJoin refuses a link parameter that CreateParticipant refuses (too
// long), as it refuses a too long external id, instead of sending it to
// PostgreSQL and letting the landing page through.
func TestCanJoinBoundsLinkParameters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: 2, Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformMTurk}})
	if err != nil {
		t.Fatal(err)
	}
	long := map[string]string{"assignmentId": strings.Repeat("A", store.MaxPlatformParamLen+1), "hitId": "H1"}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "W1", long); collect.KindOf(err) != study.KindInvalid {
		t.Fatalf("CreateParticipant with a too long assignmentId: %v; want KindInvalid", err)
	}
	if err := s.CanJoin(ctx, st, "W1", long); collect.KindOf(err) != study.KindInvalid {
		t.Errorf("CanJoin with a too long assignmentId: %v; want KindInvalid, as CreateParticipant", err)
	}
	if err := s.CanJoin(ctx, st, "W1", map[string]string{"assignmentId": "A1", "hitId": "H1"}); err != nil {
		t.Errorf("CanJoin with a fitting assignmentId: %v", err)
	}
}
