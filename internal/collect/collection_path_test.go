package collect_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// AnswerNext on a landmark study: two participants answer with the next
// question issued in the answer's transaction until the design is covered
// and they are done. No comparison is handed out more often than repeats,
// the design recorded exactly the answers to its questions, and every
// participant's counter equals its stored answers.
func TestAnswerNextLandmark(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	st := designStudy(t, s, "an", study.DesignLandmarkK1, study.DesignConfig{Seed: 3, Landmarks: 3, Repeats: 2}, 9, 40)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(5), 9, 2, 1), 0, 1)
	type who struct {
		id int64
		pr study.Progress
	}
	var ps []*who
	for i := range 2 {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("w", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, &who{p.ID, pr})
	}
	for step := 0; ; step++ {
		if step > 200 {
			t.Fatal("not done after 200 answers")
		}
		w := ps[step%2]
		if w.pr.Done {
			if ps[(step+1)%2].pr.Done {
				break
			}
			continue
		}
		q := w.pr.Question
		created, pr, err := s.AnswerNext(ctx, w.id, study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)})
		if err != nil || !created {
			t.Fatalf("step %d: created %v, %v", step, created, err)
		}
		if pr.Answered != w.pr.Answered+1 {
			t.Fatalf("step %d: answered %d after %d", step, pr.Answered, w.pr.Answered)
		}
		if pr.Question != nil {
			held, err := s.Next(ctx, w.id)
			if err != nil || held.Question == nil || held.Question.ID != pr.Question.ID || held.Question.Anchor != pr.Question.Anchor {
				t.Fatalf("step %d: Next returns %+v, AnswerNext gave %+v (%v)", step, held.Question, pr.Question, err)
			}
		}
		w.pr = pr
	}
	var over, designAnswers, answers, counted int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM questions WHERE study_id = $1 AND design = $2
		GROUP BY anchor, least(left_idx, right_idx), greatest(left_idx, right_idx) HAVING count(*) > 2) x`, st.ID, study.DesignLandmarkK1).Scan(&over); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE q.design = $2), count(*) FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1`, st.ID, study.DesignLandmarkK1).Scan(&designAnswers, &answers); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT sum(answered) FROM participants WHERE study_id = $1`, st.ID).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	lp := status.Progress.Landmark
	// k1 on 9 items and 3 landmarks: 6·3 + 3·1 = 21 comparisons, 42 answers.
	if over != 0 || designAnswers != 42 || status.Recorded != 42 || !status.Progress.Done || lp.Covered != 21 {
		t.Errorf("%d over repeats; %d design answers, %d recorded, done %v, progress %+v; want 0, 42, 42, covered 21",
			over, designAnswers, status.Recorded, status.Progress.Done, lp)
	}
	if answers != 80 || counted != 80 || !ps[0].pr.Done || !ps[1].pr.Done {
		t.Errorf("%d answers stored, %d counted on the participants, done %v %v; want 80, 80, both done",
			answers, counted, ps[0].pr.Done, ps[1].pr.Done)
	}
}

// A replica that stopped between an answer's commit and its recording
// leaves the answer in the design's inbox with its lease still out: the
// next RecordPending (any replica's) records it, releases the lease and
// gives the slot back to the pool.
func TestRecordPendingAfterAStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	// One question: the participant holds no second comparison ahead.
	st := designStudy(t, s, "stop", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 1)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := pr.Question
	if q.Design != study.DesignLandmarkK1 {
		t.Fatalf("first question is %s", q.Design)
	}
	// What the stopped replica's answer transaction committed.
	if _, err := pool.Exec(ctx, `
		WITH a AS (INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther)
			VALUES ($1, $2, $3, $4, $5, $6)),
		v AS (INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES ($2, $4, least($5, $6), greatest($5, $6), 1, 0)),
		i AS (INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther) VALUES ($2, $3, $4, $5, $6))
		UPDATE participants SET answered = 1, open_question = NULL WHERE id = $3`,
		q.ID, st.ID, p.ID, q.Anchor.Index, min(q.Options[0].Index, q.Options[1].Index), max(q.Options[0].Index, q.Options[1].Index)); err != nil {
		t.Fatal(err)
	}
	taken := func() (n int) {
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(taken), 0) FROM design_pool WHERE study_id = $1`, st.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := taken(); got != 1 {
		t.Fatalf("before: %d slots taken, want the lease's 1", got)
	}
	fresh, _ := designStore(pool)
	if err := fresh.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	status, err := fresh.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	var inbox, leases int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM design_inbox), (SELECT count(*) FROM design_leases)`).Scan(&inbox, &leases); err != nil {
		t.Fatal(err)
	}
	if status.Recorded != 1 || status.Progress.Landmark.Answered != 1 || inbox != 0 || leases != 0 || taken() != 0 {
		t.Fatalf("after RecordPending: %d recorded, progress %+v, %d in the inbox, %d leases, %d taken; want 1, answered 1, 0, 0, 0",
			status.Recorded, status.Progress.Landmark, inbox, leases, taken())
	}
}

// A study upgraded from before migration 000009 has leases out and no pool
// rows: the first writer builds the pool counting those leases as taken,
// so repeats still hold.
func TestPoolCountsLeasesTakenBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, schs := designStore(pool)
	// 4 items, landmarks {0, 1} drawn: two comparisons, each wanted once.
	st := designStudy(t, s, "old", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 3)
	ids, qs := holdQuestions(t, s, st.ID, 2)
	// As before the migration: the leases, no pool.
	if _, err := pool.Exec(ctx, `DELETE FROM design_pool WHERE study_id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	schs[study.DesignLandmarkK1].DropCache()
	// The first participant answers: the writer rebuilds the pool; the
	// second comparison is still out on lease, so a third participant gets
	// a fallback, not that comparison again.
	if _, err := s.Answer(ctx, ids[0], study.AnswerInput{QuestionID: qs[0].ID, Closer: qs[0].Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	recorded(t, s)
	p3, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p3.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Question.Design != study.DesignFallback {
		t.Fatalf("third participant got a %s question on anchor %d; the only open comparison is on lease", pr.Question.Design, pr.Question.Anchor.Index)
	}
	var taken int
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(taken), 0) FROM design_pool WHERE study_id = $1`, st.ID).Scan(&taken); err != nil {
		t.Fatal(err)
	}
	if taken != 1 {
		t.Fatalf("%d slots taken, want the second participant's lease", taken)
	}
}

// Items added to an open study reach the questions at once: the study's
// version moves and every server reads the items again.
func TestItemsAddedAfterQuestions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "grow", Title: "grow", QuestionsPerParticipant: 200, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	items := demo.Items()
	if _, _, err := s.AddItems(ctx, st.ID, items[:3]); err != nil {
		t.Fatal(err)
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	answerOne := func() *study.Question {
		t.Helper()
		pr, err := s.Next(ctx, p.ID)
		if err != nil || pr.Question == nil {
			t.Fatalf("next: %+v %v", pr, err)
		}
		q := pr.Question
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
		return q
	}
	answerOne()
	added, _, err := s.AddItems(ctx, st.ID, items[3:8])
	if err != nil || len(added) != 5 {
		t.Fatalf("added %d, %v", len(added), err)
	}
	byIndex := map[int]study.Item{}
	all, err := s.ListItems(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range all {
		byIndex[it.Index] = it
	}
	seen := false
	for range 40 {
		q := answerOne()
		for _, ref := range []study.ItemRef{q.Anchor, q.Options[0], q.Options[1]} {
			it, ok := byIndex[ref.Index]
			if !ok || it.Label != ref.Label || it.SHA256 != ref.SHA256 {
				t.Fatalf("question shows item %+v; the study has %+v", ref, it)
			}
			seen = seen || ref.Index >= 3
		}
	}
	if !seen {
		t.Fatal("40 questions after the upload and none shows a new item")
	}
}

// AuthenticateParticipant finds the participant of a token (the second
// time from memory, with no query: it still answers after its row's token
// changed in the database), refuses an unknown token as KindUnauthorized,
// and never hands out progress it may not have current.
func TestAuthenticateParticipant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "auth", Title: "auth", QuestionsPerParticipant: 1, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	p, token, err := s.CreateParticipant(ctx, st.ID, "ext-7", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE participants SET completion_code = 'CODE' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.AuthenticateParticipant(ctx, token)
	if err != nil || got.ID != p.ID || got.StudyID != st.ID || got.PublicID != p.PublicID || got.ExternalID != "ext-7" || got.CompletionCode != "" {
		t.Fatalf("first: %+v, %v; want participant %d of study %d without progress", got, err, p.ID, st.ID)
	}
	if _, err := pool.Exec(ctx, `UPDATE participants SET token_hash = '\x00' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if again, err := s.AuthenticateParticipant(ctx, token); err != nil || again != got {
		t.Fatalf("second: %+v, %v; want the same from memory", again, err)
	}
	if _, err := s.AuthenticateParticipant(ctx, "no-such-token"); collect.KindOf(err) != study.KindUnauthorized {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := collect.New(pool).AuthenticateParticipant(ctx, token); collect.KindOf(err) != study.KindUnauthorized {
		t.Fatalf("a fresh store with the token gone from the database: %v", err)
	}
	// The participant's row gone (a purged study): a question for them is
	// refused as for an unknown token, and the identity is forgotten.
	if _, err := pool.Exec(ctx, `UPDATE participants SET token_hash = sha256($2::bytea) WHERE id = $1`, p.ID, token); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM participants WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx, got.ID); collect.KindOf(err) != study.KindUnauthorized {
		t.Fatalf("next for a participant who is gone: %v", err)
	}
	if _, err := s.AuthenticateParticipant(ctx, token); collect.KindOf(err) != study.KindUnauthorized {
		t.Fatalf("the identity of a participant who is gone is still known: %v", err)
	}
}

// newQuestion lets a new participant of the study take a question and
// returns them with it.
func newQuestion(t *testing.T, s *collect.Store, studyID int64) (int64, *study.Question) {
	t.Helper()
	ids, qs := holdQuestions(t, s, studyID, 1)
	return ids[0], qs[0]
}

// holdQuestions lets m new participants of the study take a question each
// and returns them with their questions.
func holdQuestions(t *testing.T, s *collect.Store, studyID int64, m int) ([]int64, []*study.Question) {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	var qs []*study.Question
	for range m {
		p, _, err := s.CreateParticipant(ctx, studyID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids, qs = append(ids, p.ID), append(qs, pr.Question)
	}
	return ids, qs
}
