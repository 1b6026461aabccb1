package collect_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// The platform settings a study form sends: each rule refused with its
// reason, a good setting stored and read back normalised, settings of
// another platform than the chosen one dropped.
func TestPlatformSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 5)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 5, Status: study.StatusOpen}
	for name, c := range map[string]struct {
		p    study.Platform
		want string
	}{
		"unknown platform":    {study.Platform{Kind: "mturkish"}, "unknown platform"},
		"prolific, no code":   {study.Platform{Kind: "prolific"}, "needs its completion code"},
		"code with a space":   {study.Platform{Kind: "prolific", CompletionCode: "C 1"}, "must be 1 to 64 letters"},
		"code too long":       {study.Platform{Kind: "prolific", CompletionCode: strings.Repeat("C", 65)}, "must be 1 to 64 letters"},
		"screened code bad":   {study.Platform{Kind: "prolific", CompletionCode: "C1", ScreenedOutCode: "x;y"}, "must be 1 to 64 letters"},
		"generic, no param":   {study.Platform{Kind: "generic"}, "participant id parameter"},
		"generic, bad param":  {study.Platform{Kind: "generic", IDParam: "1pid"}, "participant id parameter"},
		"return URL not http": {study.Platform{Kind: "generic", IDParam: "pid", ReturnURL: "javascript:alert(1)"}, "return URL"},
		"return URL, no host": {study.Platform{Kind: "generic", IDParam: "pid", ReturnURL: "https:///done"}, "return URL"},
		"return URL too long": {study.Platform{Kind: "generic", IDParam: "pid", ReturnURL: "https://x.org/" + strings.Repeat("a", 2000)}, "return URL"},
	} {
		in.Platform = c.p
		_, err := s.UpdateStudy(ctx, st.ID, in)
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want KindInvalid with %q", name, err, c.want)
		}
	}
	in.Platform = study.Platform{Kind: " prolific ", CompletionCode: " C0DE-1 ", ScreenedOutCode: "SCREENED",
		IDParam: "ignored", ReturnURL: "https://ignored.example"}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.StudyBySlug(ctx, st.Slug)
	want := study.Platform{Kind: "prolific", CompletionCode: "C0DE-1", ScreenedOutCode: "SCREENED"}
	if err != nil || got.Platform != want {
		t.Fatalf("stored platform %+v, %v; want %+v", got.Platform, err, want)
	}
	in.Platform = study.Platform{Kind: "generic", IDParam: "pid", ReturnURL: "https://panel.example/done?c={code}&id={external_id}"}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	in.Platform = study.Platform{CompletionCode: "dropped"}
	if up, err := s.UpdateStudy(ctx, st.ID, in); err != nil || up.Platform != (study.Platform{}) {
		t.Fatalf("no platform: %+v, %v; want nothing kept", up.Platform, err)
	}
}

// A study with a completion code gives it to everyone who finishes, and its
// screened-out code to a participant excluded before finishing; a study
// without codes gives each participant a random code of their own. The
// code is given when the last answer is stored and when the design runs
// out of questions early.
func TestPlatformCompletionCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 4, 2)
	finish := func(id int64) string { return finishQuestions(t, s, id) }
	join := func(ext string) study.Participant {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// No codes: one of their own each.
	a, b := finish(join("a").ID), finish(join("b").ID)
	if a == "" || b == "" || a == b {
		t.Fatalf("random codes %q and %q; want two different codes", a, b)
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 2, Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "STUDYCODE", ScreenedOutCode: "SCREENED"}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if got := finish(join("c").ID); got != "STUDYCODE" {
		t.Errorf("finished on a Prolific study with code %q, want STUDYCODE", got)
	}
	ex := join("excluded")
	if err := s.SetExcluded(ctx, st.ID, ex.PublicID, true); err != nil {
		t.Fatal(err)
	}
	if got := finish(ex.ID); got != "SCREENED" {
		t.Errorf("excluded participant finished with %q, want SCREENED", got)
	}
	// A participant who finished before the codes were set keeps theirs.
	if again, _, err := s.CreateParticipant(ctx, st.ID, "a", nil); err != nil || again.CompletionCode != a {
		t.Errorf("earlier participant's code %q, %v; want %q kept", again.CompletionCode, err, a)
	}
	// Without a screened-out code an excluded participant gets the study's code.
	in.Platform.ScreenedOutCode = ""
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	ex2 := join("excluded-2")
	if err := s.SetExcluded(ctx, st.ID, ex2.PublicID, true); err != nil {
		t.Fatal(err)
	}
	if got := finish(ex2.ID); got != "STUDYCODE" {
		t.Errorf("excluded participant without a screened-out code finished with %q, want STUDYCODE", got)
	}

	// Early completion: 4 items have 12 comparisons; asking 20 of each
	// participant, the random design runs out and completes them early.
	s2, st2 := newStudy(t, 4, 20)
	in2 := study.StudyInput{Slug: st2.Slug, Title: st2.Title, QuestionsPerParticipant: 20, Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformGeneric, IDParam: "pid", CompletionCode: "EARLY"}}
	if _, err := s2.UpdateStudy(ctx, st2.ID, in2); err != nil {
		t.Fatal(err)
	}
	p, _, err := s2.CreateParticipant(ctx, st2.ID, "e", nil)
	if err != nil {
		t.Fatal(err)
	}
	s = s2
	if got := finish(p.ID); got != "EARLY" {
		t.Errorf("completed early with %q, want EARLY", got)
	}
}

// Prolific's STUDY_ID and SESSION_ID are kept with the participant; a
// resumed participant's are updated with those given (empty ones ignored).
func TestPlatformParamsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 2)
	p, _, err := s.CreateParticipant(ctx, st.ID, "pp", map[string]string{"STUDY_ID": "st-1", "SESSION_ID": "se-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "pp", map[string]string{"SESSION_ID": "se-2", "STUDY_ID": " "}); err != nil {
		t.Fatal(err)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 10)
	if err != nil || len(ps) != 1 || ps[0].ID != p.ID {
		t.Fatalf("participants %v, %v; want the one", ps, err)
	}
	if got := ps[0].PlatformParams; len(got) != 2 || got["STUDY_ID"] != "st-1" || got["SESSION_ID"] != "se-2" {
		t.Fatalf("kept %v; want STUDY_ID st-1 and the latest SESSION_ID se-2", got)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "long", map[string]string{"SESSION_ID": strings.Repeat("x", 201)}); collect.KindOf(err) != study.KindInvalid {
		t.Errorf("a 201-character parameter: %v; want KindInvalid", err)
	}
}

// A study on a recruiting platform takes no participant without an
// external id (white space is none), on joining or on the landing page's
// question (CanJoin); a study without a platform does.
func TestPlatformStudyNeedsExternalID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 4, 2)
	if _, _, err := s.CreateParticipant(ctx, st.ID, "", nil); err != nil {
		t.Fatalf("an anonymous participant of a study without a platform: %v", err)
	}
	for _, pl := range []study.Platform{{Kind: study.PlatformProlific, CompletionCode: "C1"}, {Kind: study.PlatformMTurk},
		{Kind: study.PlatformGeneric, IDParam: "pid"}} {
		in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 2, Status: study.StatusOpen, Platform: pl}
		up, err := s.UpdateStudy(ctx, st.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{"", " \t "} {
			if _, _, err := s.CreateParticipant(ctx, st.ID, ext, nil); !errors.Is(err, collect.ErrExternalIDRequired) || collect.KindOf(err) != study.KindInvalid {
				t.Errorf("%s: joining with %q: %v; want ErrExternalIDRequired", pl.Kind, ext, err)
			}
			if err := s.CanJoin(ctx, up, ext, nil); !errors.Is(err, collect.ErrExternalIDRequired) {
				t.Errorf("%s: CanJoin with %q: %v; want ErrExternalIDRequired", pl.Kind, ext, err)
			}
		}
		if _, _, err := s.CreateParticipant(ctx, st.ID, "id-"+pl.Kind, nil); err != nil {
			t.Errorf("%s: joining with an id: %v", pl.Kind, err)
		}
	}
	var n int
	if err := s.CanJoin(ctx, st, "", nil); err != nil { // st: the study as it was, without a platform
		t.Errorf("CanJoin without a platform: %v", err)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ExternalID == "" {
			n++
		}
	}
	if len(ps) != 4 || n != 1 {
		t.Fatalf("%d participants, %d without an id; want 4, the one that joined before the platform", len(ps), n)
	}
}

// finishQuestions answers the participant's questions (always the right
// option) until they are done, and returns their completion code.
func finishQuestions(t *testing.T, s *collect.Store, id int64) string {
	t.Helper()
	ctx := context.Background()
	for {
		pr, err := s.Next(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done {
			return pr.CompletionCode
		}
		if _, err := s.Answer(ctx, id, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[1].Index}); err != nil {
			t.Fatal(err)
		}
	}
}
