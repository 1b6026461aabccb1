package collect_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// On a recruiting platform the quota counts the participants who answered:
// five invented PROLIFIC_PIDs that answer nothing leave a quota of five
// open (they used to fill it); five who answer fill it, and the invented
// ones can still come back.
func TestPlatformQuotaCountsParticipantsWhoAnswered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "p", Title: "P", QuestionsPerParticipant: 3, Status: study.StatusOpen,
		Platform: study.Platform{Kind: study.PlatformProlific, CompletionCode: "C0"}, Quota: study.Quota{MaxParticipants: 5, IdleMinutes: 30}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:5]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	for i := range 5 {
		if _, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("invented-", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CanJoin(ctx, st, "real-0", nil); err != nil {
		t.Fatalf("landing page after 5 invented ids that answered nothing: %v; want a place", err)
	}
	for i := range 5 {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("real-", i), nil)
		if err != nil {
			t.Fatalf("real-%d after 5 invented ids: %v; want a place", i, err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "late", nil); collect.KindOf(err) != study.KindFull {
		t.Fatalf("a sixth with 5 who answered: %v; want KindFull", err)
	}
	if err := s.CanJoin(ctx, st, "late", nil); collect.KindOf(err) != study.KindFull {
		t.Fatalf("landing page with 5 who answered: %v; want KindFull", err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "invented-0", nil); err != nil {
		t.Fatalf("a participant who joined before, back in a full study: %v", err)
	}
}

// One external id joining again and again keeps at most
// MaxTokensPerParticipant live tokens: the oldest given on a resume are
// revoked (even when this process cached them), the first and the newest
// work.
func TestResumeTokensBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "t", Title: "T", QuestionsPerParticipant: 3, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	first, firstToken, err := s.CreateParticipant(ctx, st.ID, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for range 3 * collect.MaxTokensPerParticipant {
		p, tok, err := s.CreateParticipant(ctx, st.ID, "w", nil)
		if err != nil || p.ID != first.ID {
			t.Fatalf("resume: %+v %v", p, err)
		}
		if len(tokens) == 0 { // cached by this process before it is revoked
			if _, err := s.AuthenticateParticipant(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		tokens = append(tokens, tok)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM participant_tokens WHERE participant_id = $1`, first.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n+1 != collect.MaxTokensPerParticipant {
		t.Errorf("%d live tokens after %d resumes, want %d", n+1, len(tokens), collect.MaxTokensPerParticipant)
	}
	for _, tok := range []string{firstToken, tokens[len(tokens)-1], tokens[len(tokens)-collect.MaxTokensPerParticipant+1]} {
		if p, err := s.AuthenticateParticipant(ctx, tok); err != nil || p.ID != first.ID {
			t.Errorf("a kept token: %+v %v", p, err)
		}
	}
	for _, tok := range []string{tokens[0], tokens[len(tokens)-collect.MaxTokensPerParticipant]} {
		if _, err := s.AuthenticateParticipant(ctx, tok); collect.KindOf(err) != study.KindUnauthorized {
			t.Errorf("a revoked token: %v; want KindUnauthorized", err)
		}
	}
}
