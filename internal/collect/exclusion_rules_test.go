package collect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// A study's exclusion rules are checked when a participant finishes: one
// who answered too fast too often, or always on one side, is excluded with
// the reason and gets the screened-out code; one who looked is not. A
// participant the researcher excluded keeps that (no reason). Answers stay
// stored.
func TestExclusionRulesAtTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 8, 4)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 4, Status: study.StatusOpen,
		Platform:  study.Platform{Kind: study.PlatformProlific, CompletionCode: "DONE", ScreenedOutCode: "SCREENED"},
		Exclusion: study.ExclusionRules{FastMS: 400, MaxFastShare: 0.3, MaxSideShare: 0.9}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	// run answers 4 questions: ms gives each response time, left says
	// which side each picks.
	run := func(ext string, ms []int, left []bool) string {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				return pr.CompletionCode
			}
			c := pr.Question.Options[1].Index
			if left[i] {
				c = pr.Question.Options[0].Index
			}
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: c, ResponseMS: &ms[i]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mixed := []bool{true, false, true, false}
	// 1 of 4 under 400 ms (25%, allowed), sides mixed.
	if code := run("careful", []int{2000, 300, 1500, 900}, mixed); code != "DONE" {
		t.Errorf("careful participant got %q, want DONE", code)
	}
	// 2 of 4 under 400 ms: 50% > 30%.
	if code := run("hasty", []int{200, 300, 1500, 900}, mixed); code != "SCREENED" {
		t.Errorf("hasty participant got %q, want SCREENED", code)
	}
	// All four on the left: 100% > 90%.
	if code := run("lefty", []int{2000, 2000, 2000, 2000}, []bool{true, true, true, true}); code != "SCREENED" {
		t.Errorf("one-sided participant got %q, want SCREENED", code)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]study.ParticipantRow{}
	for _, p := range ps {
		why[p.ExternalID] = p
	}
	if p := why["careful"]; p.Excluded || p.ExcludedReason != "" {
		t.Errorf("careful: excluded %v (%q)", p.Excluded, p.ExcludedReason)
	}
	if p := why["hasty"]; !p.Excluded || p.ExcludedReason != "50% of the answers faster than 400 ms (the limit is 30%)" || p.Answered != 4 {
		t.Errorf("hasty: excluded %v (%q), %d answers", p.Excluded, p.ExcludedReason, p.Answered)
	}
	if p := why["lefty"]; !p.Excluded || p.ExcludedReason != "100% of the answers on the left (the limit is 90%)" {
		t.Errorf("lefty: excluded %v (%q)", p.Excluded, p.ExcludedReason)
	}
	// Rules off: nobody is excluded automatically.
	in.Exclusion = study.ExclusionRules{}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if code := run("hasty-2", []int{1, 1, 1, 1}, []bool{true, true, true, true}); code != "DONE" {
		t.Errorf("without rules a hasty participant got %q, want DONE", code)
	}
}

// The rules are checked on the form.
func TestExclusionRulesChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 3)
	for _, r := range []study.ExclusionRules{
		{FastMS: 400, MaxFastShare: 1}, {FastMS: 0, MaxFastShare: 0.3}, {FastMS: 70000, MaxFastShare: 0.3},
		{MaxSideShare: 0.5}, {MaxSideShare: 1}, {MaxSideShare: -0.1}, {MaxFastShare: -0.1, FastMS: 300},
	} {
		_, err := s.UpdateStudy(ctx, st.ID, study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3,
			Status: study.StatusOpen, Exclusion: r})
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), "%") && !strings.Contains(err.Error(), "ms") {
			t.Errorf("%+v: %v; want KindInvalid", r, err)
		}
	}
}

// A participant the design runs out of questions for (4 items hold 12
// comparisons; the study asks 20) finishes early, and the rules are
// checked then too.
func TestExclusionRulesOnEarlyCompletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 4, 20)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 20, Status: study.StatusOpen,
		Platform:  study.Platform{Kind: study.PlatformProlific, CompletionCode: "DONE", ScreenedOutCode: "SCREENED"},
		Exclusion: study.ExclusionRules{MaxSideShare: 0.9}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "early", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Done {
			if i != 12 || pr.CompletionCode != "SCREENED" {
				t.Fatalf("done after %d answers with %q; want 12 and SCREENED", i, pr.CompletionCode)
			}
			return
		}
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[1].Index}); err != nil {
			t.Fatal(err)
		}
	}
}
