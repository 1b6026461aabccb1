package collect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// formatStudy creates an open random study of format with n items.
func formatStudy(t *testing.T, s *Store, slug, format string, n, perParticipant int, q study.QualityControl) study.Study {
	t.Helper()
	st, err := s.CreateStudy(context.Background(), study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: perParticipant,
		Status: study.StatusOpen, Design: study.DesignRandom, Format: format, Quality: q})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, s.pool, st.ID, n)
	return st
}

// TestOddOneOutTrials: an odd-one-out study issues one question row per
// trial (three distinct items, no anchor), takes the odd one as the
// answer, stores it once with its choice and casts the votes of the two
// triplets it derives; every bad answer is KindInvalid with the reason
// and stores nothing; the same answer again stores nothing, another is a
// conflict.
func TestOddOneOutTrials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	st := formatStudy(t, s, "odd", "odd-one-out", 8, 4, study.QualityControl{})
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := pr.Question
	items := q.OptionIndices()
	if q.Format != study.FormatOddOneOut || len(items) != 3 || items[0] == items[1] || items[0] == items[2] || items[1] == items[2] || q.Choose != 1 {
		t.Fatalf("question %+v", q)
	}
	if got := q.Items(); len(got) != 3 {
		t.Fatalf("an odd-one-out question shows %d items, want 3", len(got))
	}
	notShown := 0
	for slices.Contains(items, notShown) {
		notShown++
	}
	for _, bad := range []struct {
		choices []int
		reason  string
	}{
		{[]int{notShown}, "is not one of the items shown"},
		{[]int{items[0], items[1]}, "2 choices"},
		{[]int{}, "no choice"},
		{nil, "choices are missing"},
	} {
		_, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: bad.choices})
		if KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), bad.reason) {
			t.Fatalf("choices %v: %v; want KindInvalid %q", bad.choices, err, bad.reason)
		}
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM answers WHERE study_id = $1`, st.ID).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("bad answers stored %d rows, %v", stored, err)
	}
	odd := items[1]
	created, pr2, err := s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{odd}})
	if err != nil || !created || pr2.Question == nil || pr2.Question.Format != study.FormatOddOneOut {
		t.Fatalf("answer: %v %v %+v", created, err, pr2.Question)
	}
	if created, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{odd}}); err != nil || created {
		t.Fatalf("the same answer again: created %v, %v", created, err)
	}
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{items[0]}}); KindOf(err) != study.KindConflict {
		t.Fatalf("another answer: %v; want a conflict", err)
	}
	var options, choices []int
	if err := pool.QueryRow(ctx, `SELECT q.options, a.choices FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.study_id = $1`,
		st.ID).Scan(&options, &choices); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(options, items) || !slices.Equal(choices, []int{odd}) {
		t.Fatalf("stored options %v choices %v; want %v and [%d]", options, choices, items, odd)
	}
	want := trial.OddOneOut{Items: [3]int(items), Odd: odd}.Triplets(nil)
	checkVotes(t, s, st.ID, want)
}

// TestRankTrials: a rank 4-choose-2 study issues the query and four
// distinct references, takes two of them in order, refuses a choice not
// shown, a repeated one, too many, too few and the query itself, and
// casts the votes of the five triplets the answer derives
// (k·n − k(k+1)/2 = 2·4 − 3).
func TestRankTrials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	st := formatStudy(t, s, "rank", "rank:4:2", 6, 3, study.QualityControl{CantDecide: true})
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := pr.Question
	refs := q.OptionIndices()
	query := q.Anchor.Index
	if q.Format != study.FormatRank || len(refs) != 4 || slices.Contains(refs, query) || q.Choose != 2 {
		t.Fatalf("question %+v", q)
	}
	for i, r := range refs {
		if slices.Contains(refs[:i], r) {
			t.Fatalf("references %v repeat an item", refs)
		}
	}
	for _, bad := range []struct {
		choices []int
		reason  string
	}{
		{[]int{query, refs[0]}, "is not one of the references shown"},
		{[]int{refs[0], refs[0]}, "chosen twice"},
		{[]int{refs[0], refs[1], refs[2]}, "3 choices, want 2 in order"},
		{[]int{refs[0]}, "1 choice(s), want 2 in order"},
	} {
		_, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: bad.choices})
		if KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), bad.reason) {
			t.Fatalf("choices %v: %v; want KindInvalid %q", bad.choices, err, bad.reason)
		}
	}
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{refs[0]}, Skip: true}); KindOf(err) != study.KindInvalid {
		t.Fatalf("choices and a skip: %v", err)
	}
	choices := []int{refs[2], refs[0]}
	if created, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: choices}); err != nil || !created {
		t.Fatalf("answer: %v %v", created, err)
	}
	// Out of order is another answer: a conflict.
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{refs[0], refs[2]}}); KindOf(err) != study.KindConflict {
		t.Fatalf("the choices in another order: %v; want a conflict", err)
	}
	want := trial.Rank{Query: query, Options: refs, Choices: choices}.Triplets(nil)
	if len(want) != 5 {
		t.Fatalf("%d derived triplets", len(want))
	}
	checkVotes(t, s, st.ID, want)

	// "Can't decide" stores the skip, with no vote.
	pr, err = s.Next(ctx, p.ID)
	if err != nil || pr.Question == nil {
		t.Fatal(pr, err)
	}
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Skip: true}); err != nil {
		t.Fatal(err)
	}
	checkVotes(t, s, st.ID, want)
}

// TestRankTrialsConcurrent: many participants answer rank 8-choose-2
// trials at once (each answer locks 13 vote rows); every answer is stored
// once and the votes count every derived triplet (no deadlock, nothing
// lost).
func TestRankTrialsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	const people, each = 8, 6
	st := formatStudy(t, s, "rankc", "rank:8:2", 10, each, study.QualityControl{})
	var (
		mu   sync.Mutex
		want []triplet.Triplet
		wg   sync.WaitGroup
	)
	errs := make(chan error, people)
	for range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				errs <- err
				return
			}
			pr, err := s.Next(ctx, p.ID)
			for err == nil && pr.Question != nil {
				q := pr.Question
				refs := q.OptionIndices()
				choices := []int{refs[3], refs[1]}
				mu.Lock()
				want = trial.Rank{Query: q.Anchor.Index, Options: refs, Choices: choices}.Triplets(want)
				mu.Unlock()
				_, pr, err = s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: choices})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var answers int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM answers WHERE study_id = $1 AND cardinality(choices) = 2`, st.ID).Scan(&answers); err != nil || answers != people*each {
		t.Fatalf("%d answers stored, %v; want %d", answers, err, people*each)
	}
	checkVotes(t, s, st.ID, want)
}

// checkVotes compares the study's votes with those of the triplets want.
func checkVotes(t *testing.T, s *Store, studyID int64, want []triplet.Triplet) {
	t.Helper()
	wantVotes := map[triplet.Key][2]int{}
	for _, tr := range want {
		k := triplet.KeyOf(tr)
		v := wantVotes[k]
		if tr.Closer == k.J {
			v[0]++
		} else {
			v[1]++
		}
		wantVotes[k] = v
	}
	rows, err := s.pool.Query(context.Background(), `SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[triplet.Key][2]int{}
	for rows.Next() {
		var k triplet.Key
		var v [2]int
		if err := rows.Scan(&k.Anchor, &k.J, &k.K, &v[0], &v[1]); err != nil {
			t.Fatal(err)
		}
		got[k] = v
	}
	if len(got) != len(wantVotes) {
		t.Fatalf("%d vote rows, want %d: %v", len(got), len(wantVotes), got)
	}
	for k, v := range wantVotes {
		if got[k] != v {
			t.Fatalf("votes of %v: %v, want %v", k, got[k], v)
		}
	}
}

// TestFormatCatchTrials: an odd-one-out study's catch trial shows one item
// twice beside another, the right answer the one shown once
// (trial.CatchOddOneOut); a rank study's shows the query among its
// references, the right answer choosing it first (trial.CatchRank). Each
// is stored as a trial answer with whether it was right, casting no vote.
func TestFormatCatchTrials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	catchFirst := study.QualityControl{CatchAt: []int{1}}
	odd := formatStudy(t, s, "oddc", "odd-one-out", 6, 2, catchFirst)
	rank := formatStudy(t, s, "rankc", "rank:4:2", 7, 2, catchFirst)
	first := func(st study.Study) *study.Question {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil || pr.Question == nil || pr.Question.Design != study.DesignCatch {
			t.Fatalf("first question %+v, %v; want a catch trial", pr.Question, err)
		}
		return pr.Question
	}
	correct := func(qid string) *bool {
		t.Helper()
		var c *bool
		if err := pool.QueryRow(ctx, `SELECT correct FROM trial_answers WHERE question_id = $1`, qid).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, right := range []bool{true, false} {
		q := first(odd)
		items := q.OptionIndices()
		single := -1
		for _, it := range items {
			n := 0
			for _, o := range items {
				if o == it {
					n++
				}
			}
			if n == 1 {
				single = it
			}
		}
		if len(items) != 3 || single < 0 || q.Format != study.FormatOddOneOut {
			t.Fatalf("odd-one-out catch trial %v", items)
		}
		choice := single
		if !right {
			for _, it := range items { // the item shown twice
				if it != single {
					choice = it
				}
			}
		}
		if _, err := s.Answer(ctx, q.ParticipantID, study.AnswerInput{QuestionID: q.ID, Choices: []int{choice}}); err != nil {
			t.Fatal(err)
		}
		if c := correct(q.ID); c == nil || *c != right {
			t.Fatalf("odd-one-out catch answered %d (single %d): correct %v, want %v", choice, single, c, right)
		}

		q = first(rank)
		refs := q.OptionIndices()
		if !slices.Contains(refs, q.Anchor.Index) || len(refs) != 4 {
			t.Fatalf("rank catch trial: query %d, references %v", q.Anchor.Index, refs)
		}
		var others []int
		for _, r := range refs {
			if r != q.Anchor.Index {
				others = append(others, r)
			}
		}
		choices := []int{q.Anchor.Index, others[0]}
		if !right {
			choices = []int{others[0], q.Anchor.Index}
		}
		if _, err := s.Answer(ctx, q.ParticipantID, study.AnswerInput{QuestionID: q.ID, Choices: []int{others[0], others[0]}}); KindOf(err) != study.KindInvalid {
			t.Fatalf("a repeated choice in a catch trial: %v", err)
		}
		if _, err := s.Answer(ctx, q.ParticipantID, study.AnswerInput{QuestionID: q.ID, Choices: choices}); err != nil {
			t.Fatal(err)
		}
		if c := correct(q.ID); c == nil || *c != right {
			t.Fatalf("rank catch answered %v: correct %v, want %v", choices, c, right)
		}
	}
	checkVotes(t, s, odd.ID, nil)
	checkVotes(t, s, rank.ID, nil)
}

// TestFormatRepeatTrials: an odd-one-out and a rank study with a repeat
// trial at question 3 (issue 27) ask the participant one of their own two
// earlier trials again: the same query and the same items (in an order
// of its own), answered with the format's checks (a bad answer refused
// with the reason, nothing stored), stored as a trial answer that derives
// no triplet and is consistent exactly when its first choice is the
// earlier answer's (odd-one-out: the same odd one; rank: the same most
// similar reference).
func TestFormatRepeatTrials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	repeatThird := study.QualityControl{RepeatAt: []int{3}}
	for _, format := range []string{"odd-one-out", "rank:4:2"} {
		st := formatStudy(t, s, "rep-"+strings.ReplaceAll(format, ":", "-"), format, 8, 3, repeatThird)
		for _, consistent := range []bool{true, false} {
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			earlier := map[string][]int{} // sorted items (rank: the query first) → choices
			key := func(q *study.Question) string {
				items := slices.Clone(q.OptionIndices())
				slices.Sort(items)
				if q.Format == study.FormatRank {
					items = append([]int{q.Anchor.Index}, items...)
				}
				return fmt.Sprint(items)
			}
			for i := range 2 {
				pr, err := s.Next(ctx, p.ID)
				if err != nil || pr.Question == nil || pr.Question.Design == study.DesignRepeat {
					t.Fatalf("question %d: %+v, %v", i+1, pr.Question, err)
				}
				q := pr.Question
				choices := q.OptionIndices()[:q.Choose]
				if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: choices}); err != nil {
					t.Fatal(err)
				}
				earlier[key(q)] = slices.Clone(choices)
			}
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			q := pr.Question
			before, ok := earlier[key(q)]
			if q.Design != study.DesignRepeat || !ok || q.Format != study.MustStudyFormat(format).Format || q.Choose != len(before) {
				t.Fatalf("%s: question 3 is %+v; want a repeat of one of %v", format, q, earlier)
			}
			// A bad answer is refused and stores nothing.
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: []int{before[0], before[0]}}); KindOf(err) != study.KindInvalid {
				t.Fatalf("%s: a repeated choice: %v", format, err)
			}
			choices := slices.Clone(before)
			if !consistent {
				for _, o := range q.OptionIndices() {
					if !slices.Contains(before, o) {
						choices[0] = o
						break
					}
				}
			}
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Choices: choices}); err != nil {
				t.Fatal(err)
			}
			var correct *bool
			var closer int
			if err := pool.QueryRow(ctx, `SELECT correct, closer FROM trial_answers WHERE question_id = $1`, q.ID).Scan(&correct, &closer); err != nil {
				t.Fatal(err)
			}
			if correct == nil || *correct != consistent || closer != choices[0] {
				t.Fatalf("%s: repeat answered %v after %v: correct %v, closer %d; want %v", format, choices, before, correct, closer, consistent)
			}
			var answers int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM answers WHERE participant_id = $1`, p.ID).Scan(&answers); err != nil || answers != 2 {
				t.Fatalf("%s: %d answers (the repeat derives none), %v", format, answers, err)
			}
		}
	}
}
