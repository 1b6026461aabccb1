package collect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// One participant per external id per study (issue 15): the same id joining
// again, from a new browser or through the API, resumes that participant
// with a new token beside the earlier one, its progress and, once done,
// the same completion code. No id, or the id in another study, makes a new
// participant.
func TestExternalIDResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 6, 3)
	first, tok1, err := s.CreateParticipant(ctx, st.ID, "PID-1", nil)
	if err != nil || first.Resumed {
		t.Fatalf("first join: resumed %v, %v", first.Resumed, err)
	}
	answerOne := func(id int64) {
		t.Helper()
		pr, err := s.Next(ctx, id)
		if err != nil || pr.Done {
			t.Fatalf("next: done %v, %v", pr.Done, err)
		}
		if _, err := s.Answer(ctx, id, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
	answerOne(first.ID)
	held, err := s.Next(ctx, first.ID) // a question left open in the first browser
	if err != nil {
		t.Fatal(err)
	}

	// Leading and trailing spaces are not part of the id.
	again, tok2, err := s.CreateParticipant(ctx, st.ID, " PID-1 ", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Resumed || again.ID != first.ID || again.PublicID != first.PublicID || tok2 == tok1 || tok2 == "" {
		t.Fatalf("second join: %+v token new %v; want participant %d resumed with a new token", again, tok2 != tok1, first.ID)
	}
	for i, tok := range []string{tok1, tok2} {
		p, err := s.AuthenticateParticipant(ctx, tok)
		if err != nil || p.ID != first.ID || p.ExternalID != "PID-1" {
			t.Errorf("token %d: participant %d %q, %v; want %d", i+1, p.ID, p.ExternalID, err, first.ID)
		}
	}
	pr, err := s.Next(ctx, again.ID)
	if err != nil || pr.Answered != 1 || pr.Question.ID != held.Question.ID {
		t.Fatalf("resumed progress: answered %d question %q, %v; want 1 and the held %q", pr.Answered, pr.Question.ID, err, held.Question.ID)
	}
	answerOne(again.ID)
	answerOne(again.ID)
	done, err := s.Next(ctx, again.ID)
	if err != nil || !done.Done || done.CompletionCode == "" {
		t.Fatalf("after 3 answers: %+v, %v", done, err)
	}
	third, _, err := s.CreateParticipant(ctx, st.ID, "PID-1", nil)
	if err != nil || !third.Resumed || third.ID != first.ID || third.CompletionCode != done.CompletionCode || third.CompletedAt == nil {
		t.Fatalf("join after completing: %+v, %v; want the same participant and code %q", third, err, done.CompletionCode)
	}

	// No external id: a new participant each time.
	a, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	b, _, err2 := s.CreateParticipant(ctx, st.ID, "  ", nil)
	if err != nil || err2 != nil || a.ID == b.ID || a.Resumed || b.Resumed {
		t.Fatalf("anonymous joins: %d %d resumed %v %v, %v %v", a.ID, b.ID, a.Resumed, b.Resumed, err, err2)
	}
	// The same id in another study is another participant.
	other, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s2", Title: "S2", QuestionsPerParticipant: 3, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := s.CreateParticipant(ctx, other.ID, "PID-1", nil)
	if err != nil || o.Resumed || o.ID == first.ID {
		t.Fatalf("same id in another study: %+v, %v", o, err)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if p.ExternalID == "PID-1" {
			n++
		}
	}
	if len(ps) != 3 || n != 1 {
		t.Errorf("study holds %d participants, %d with PID-1; want 3 and 1", len(ps), n)
	}
}

// Concurrent joins with one external id make exactly one participant: every
// join returns it, all but one resumed.
func TestExternalIDConcurrentJoins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 3)
	const joins = 16
	got := make([]study.Participant, joins)
	errs := make([]error, joins)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range joins {
		wg.Go(func() {
			<-start
			got[i], _, errs[i] = s.CreateParticipant(ctx, st.ID, "same-worker", nil)
		})
	}
	close(start)
	wg.Wait()
	resumed := 0
	for i := range joins {
		if errs[i] != nil {
			t.Fatalf("join %d: %v", i, errs[i])
		}
		if got[i].ID != got[0].ID {
			t.Fatalf("join %d got participant %d, join 0 got %d", i, got[i].ID, got[0].ID)
		}
		if got[i].Resumed {
			resumed++
		}
	}
	if resumed != joins-1 {
		t.Errorf("%d of %d joins resumed; want %d", resumed, joins, joins-1)
	}
	ps, err := s.ListParticipants(ctx, st.ID, 50)
	if err != nil || len(ps) != 1 {
		t.Fatalf("study holds %d participants, %v; want 1", len(ps), err)
	}
}

// A study that is not open refuses a returning external id too, and stores
// no token for it.
func TestExternalIDNotOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 3)
	if _, _, err := s.CreateParticipant(ctx, st.ID, "back-later", nil); err != nil {
		t.Fatal(err)
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: study.StatusPaused}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	_, tok, err := s.CreateParticipant(ctx, st.ID, "back-later", nil)
	if collect.KindOf(err) != study.KindNotOpen || tok != "" {
		t.Fatalf("join of a paused study: token %q, %v; want KindNotOpen", tok, err)
	}
}
