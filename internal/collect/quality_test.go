package collect_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// exportRecords returns the study's triplets.csv (or the all-answers
// export) as rows of column name to value.
func exportRecords(t *testing.T, s *collect.Store, studyID int64, all bool) []map[string]string {
	t.Helper()
	var buf bytes.Buffer
	export := s.ExportCSVWith
	if all {
		export = s.ExportAllAnswersCSV
	}
	if err := export(context.Background(), studyID, &buf, true); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for c, name := range recs[0] {
			m[name] = rec[c]
		}
		out = append(out, m)
	}
	return out
}

// totalVotes is the number of answers the study's vote table counts.
func totalVotes(t *testing.T, s *collect.Store, studyID int64) int {
	t.Helper()
	v, err := s.Votes(context.Background(), studyID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range v.Keys() {
		n += v.Get(k).Total()
	}
	return n
}

// participantRow returns the study's participant with this external id.
func participantRow(t *testing.T, s *collect.Store, studyID int64, ext string) study.ParticipantRow {
	t.Helper()
	ps, err := s.ListParticipants(context.Background(), studyID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ExternalID == ext {
			return p
		}
	}
	t.Fatalf("no participant %q", ext)
	return study.ParticipantRow{}
}

// A catch trial shows the anchor as one option; its answer is counted on
// the participant (right or wrong) and never reaches the vote table, the
// design (inbox or events) or triplets.csv; the all-answers export has it
// with kind catch.
func TestCatchTrialNeverATriplet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	st := designStudy(t, s, "catch", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 6, 4)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 4, Status: study.StatusOpen,
		Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, LandmarkItems: []int{0, 1}},
		Quality: study.QualityControl{CatchAt: []int{3, 1}}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	p, _, err := s.CreateParticipant(ctx, st.ID, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var catches []string
	for i := 1; !pr.Done; i++ {
		q := pr.Question
		isCatch := i == 1 || i == 3
		if isCatch != (q.Design == study.DesignCatch) {
			t.Fatalf("question %d is %s", i, q.Design)
		}
		closer := q.Options[0].Index
		if isCatch {
			if q.Options[0].Index != q.Anchor.Index && q.Options[1].Index != q.Anchor.Index || q.Options[0].Index == q.Options[1].Index {
				t.Fatalf("catch trial %d; %d, %d has no option identical to the anchor", q.Anchor.Index, q.Options[0].Index, q.Options[1].Index)
			}
			catches = append(catches, q.ID)
			closer = q.Anchor.Index // right the first time
			if i == 3 {
				closer = q.Options[0].Index + q.Options[1].Index - q.Anchor.Index // wrong the second
			}
		}
		if _, pr, err = s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: closer}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	if n := totalVotes(t, s, st.ID); n != 2 {
		t.Errorf("the vote table counts %d answers, want the 2 triplets", n)
	}
	var inDesign int
	if err := pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM design_inbox WHERE study_id = $1 AND anchor IN (closer, farther))
			+ (SELECT count(*) FROM design_events WHERE study_id = $1 AND anchor IN (closer, farther))`, st.ID).Scan(&inDesign); err != nil {
		t.Fatal(err)
	}
	if inDesign != 0 {
		t.Errorf("%d catch answers reached the design", inDesign)
	}
	rows := exportRecords(t, s, st.ID, false)
	if len(rows) != 2 {
		t.Fatalf("triplets.csv has %d rows, want 2", len(rows))
	}
	for _, r := range rows {
		if slices.Contains(catches, r["question_id"]) || (r["kind"] != study.KindDesign && r["kind"] != study.KindFallback) {
			t.Errorf("triplets.csv row %v: a catch trial or kind not design/fallback", r)
		}
	}
	all := exportRecords(t, s, st.ID, true)
	if len(all) != 4 {
		t.Fatalf("the all-answers export has %d rows, want 4", len(all))
	}
	correct := map[string]string{}
	for _, r := range all {
		if r["kind"] == study.KindCatch {
			correct[r["question_id"]] = r["correct"]
		}
	}
	if correct[catches[0]] != "true" || correct[catches[1]] != "false" {
		t.Errorf("catch rows correct = %v, want true then false", correct)
	}
	row := participantRow(t, s, st.ID, "p")
	if row.Answered != 4 || row.CatchTrials != 2 || row.CatchCorrect != 1 || *row.CatchAccuracy() != 0.5 {
		t.Errorf("participant: %d answered, %d of %d catch trials right; want 4, 1 of 2", row.Answered, row.CatchCorrect, row.CatchTrials)
	}
}

// runCatches answers a random study's questions as one participant: catch
// trials right except the numbers in wrong; it returns their code.
func runCatches(t *testing.T, s *collect.Store, studyID int64, ext string, wrong ...int) string {
	t.Helper()
	ctx := context.Background()
	p, _, err := s.CreateParticipant(ctx, studyID, ext, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	ms := 3000
	for i := 1; !pr.Done; i++ {
		q := pr.Question
		closer := q.Options[0].Index
		if i%2 == 0 {
			closer = q.Options[1].Index
		}
		if q.Design == study.DesignCatch {
			closer = q.Anchor.Index
			if slices.Contains(wrong, i) {
				closer = q.Options[0].Index + q.Options[1].Index - q.Anchor.Index
			}
		}
		if _, pr, err = s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: closer, ResponseMS: &ms}); err != nil {
			t.Fatal(err)
		}
	}
	return pr.CompletionCode
}

// A participant who gets fewer catch trials right than the study's
// minimum is excluded when they finish, with the reason, and gets the
// screened-out code; their triplets leave the default export.
func TestCatchAccuracyExcludes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 8, 6)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 6, Status: study.StatusOpen,
		Platform:  study.Platform{Kind: study.PlatformProlific, CompletionCode: "DONE", ScreenedOutCode: "SCREENED"},
		Exclusion: study.ExclusionRules{MinCatchAccuracy: 0.8},
		Quality:   study.QualityControl{CatchAt: []int{1, 2, 3}}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if code := runCatches(t, s, st.ID, "careful"); code != "DONE" {
		t.Errorf("careful participant got %q, want DONE", code)
	}
	if code := runCatches(t, s, st.ID, "careless", 1, 3); code != "SCREENED" {
		t.Errorf("careless participant got %q, want SCREENED", code)
	}
	careful, careless := participantRow(t, s, st.ID, "careful"), participantRow(t, s, st.ID, "careless")
	if careful.Excluded || careful.CatchTrials != 3 || careful.CatchCorrect != 3 {
		t.Errorf("careful: excluded %v, %d of %d catch trials", careful.Excluded, careful.CatchCorrect, careful.CatchTrials)
	}
	if !careless.Excluded || careless.ExcludedReason != "33% of the catch trials right (the minimum is 80%)" {
		t.Errorf("careless: excluded %v (%q)", careless.Excluded, careless.ExcludedReason)
	}
	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, st.ID, &buf); err != nil {
		t.Fatal(err)
	}
	if recs, _ := csv.NewReader(&buf).ReadAll(); len(recs)-1 != 3 {
		t.Errorf("the default export has %d rows, want the careful participant's 3 triplets", len(recs)-1)
	}
}

// A repeat trial asks a comparison the participant answered before with
// left and right swapped; the same choice counts as consistent, and it is
// no new triplet.
func TestRepeatTrialSwapsSides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 8, 4)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 4, Status: study.StatusOpen,
		Quality: study.QualityControl{RepeatAt: []int{3}}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ext  string
		same bool
	}{{"steady", true}, {"fickle", false}} {
		p, _, err := s.CreateParticipant(ctx, st.ID, tc.ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		type asked struct{ anchor, left, right, closer int }
		var before []asked
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; !pr.Done; i++ {
			q := pr.Question
			closer := q.Options[0].Index
			if (i == 3) != (q.Design == study.DesignRepeat) {
				t.Fatalf("%s: question %d is %s", tc.ext, i, q.Design)
			}
			if i == 3 {
				k := slices.IndexFunc(before, func(b asked) bool {
					return b.anchor == q.Anchor.Index && b.left == q.Options[1].Index && b.right == q.Options[0].Index
				})
				if k < 0 {
					t.Fatalf("%s: repeat %d; %d, %d is no earlier question with sides swapped (%v)",
						tc.ext, q.Anchor.Index, q.Options[0].Index, q.Options[1].Index, before)
				}
				closer = before[k].closer
				if !tc.same {
					closer = q.Options[0].Index + q.Options[1].Index - closer
				}
			}
			before = append(before, asked{q.Anchor.Index, q.Options[0].Index, q.Options[1].Index, closer})
			if _, pr, err = s.AnswerNext(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: closer}); err != nil {
				t.Fatal(err)
			}
		}
		row := participantRow(t, s, st.ID, tc.ext)
		wantSame := 0
		if tc.same {
			wantSame = 1
		}
		if row.Answered != 4 || row.RepeatTrials != 1 || row.RepeatSame != wantSame {
			t.Errorf("%s: %d answered, %d of %d repeats the same; want 4, %d of 1", tc.ext, row.Answered, row.RepeatSame, row.RepeatTrials, wantSame)
		}
	}
	if n := totalVotes(t, s, st.ID); n != 6 {
		t.Errorf("the vote table counts %d answers, want 6 (3 triplets each, the repeats not)", n)
	}
	if rows := exportRecords(t, s, st.ID, false); len(rows) != 6 {
		t.Errorf("triplets.csv has %d rows, want 6", len(rows))
	}
}

// "Can't decide" records the question as skipped: no triplet, no vote,
// nothing for the design, which gets its comparison back at once (its
// lease ends) for the next participant; the skip counts toward the
// participant's questions. A study that does not offer it refuses it.
func TestCantDecideReleasesTheComparison(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	// 4 items, landmarks {0, 1}: k1 asks (2; 0, 1) and (3; 0, 1).
	st := designStudy(t, s, "skip", study.DesignLandmarkK1, study.DesignConfig{Seed: 1, Landmarks: 2}, 4, 3)
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: study.StatusOpen,
		Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 1, LandmarkItems: []int{0, 1}}}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	join := func(ext string) (int64, *study.Question) {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID, pr.Question
	}
	pa, qa := join("a")
	if _, err := s.Answer(ctx, pa, study.AnswerInput{QuestionID: qa.ID, Skip: true}); collect.KindOf(err) != study.KindInvalid {
		t.Fatalf("a skip where the study does not offer it: %v, want KindInvalid", err)
	}
	in.Quality.CantDecide = true
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if qa.Design != study.DesignLandmarkK1 {
		t.Fatalf("first question is %s", qa.Design)
	}
	created, pr, err := s.AnswerNext(ctx, pa, study.AnswerInput{QuestionID: qa.ID, Skip: true})
	if err != nil || !created {
		t.Fatalf("skip: created %v, %v", created, err)
	}
	if pr.Answered != 1 || pr.Question == nil {
		t.Fatalf("after the skip: %d answered, question %v; want 1 and a next question", pr.Answered, pr.Question)
	}
	// Again: the same skip is no new answer; a choice now conflicts.
	if created, err := s.Answer(ctx, pa, study.AnswerInput{QuestionID: qa.ID, Skip: true}); err != nil || created {
		t.Fatalf("the skip again: created %v, %v", created, err)
	}
	if _, err := s.Answer(ctx, pa, study.AnswerInput{QuestionID: qa.ID, Closer: qa.Options[0].Index}); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("a choice after the skip: %v, want KindConflict", err)
	}
	// A's next question took the other comparison; the skipped one is free
	// again, so B gets it (without the release B would get a fallback).
	_, qb := join("b")
	if qb.Design != study.DesignLandmarkK1 || qb.Anchor.Index != qa.Anchor.Index {
		t.Fatalf("B got a %s question on anchor %d; want the skipped comparison (anchor %d)", qb.Design, qb.Anchor.Index, qa.Anchor.Index)
	}
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	status, err := s.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if status.Recorded != 0 || status.Answers != 0 {
		t.Errorf("design recorded %d, %d answers stored; want none", status.Recorded, status.Answers)
	}
	if n := totalVotes(t, s, st.ID); n != 0 {
		t.Errorf("the vote table counts %d answers after a skip", n)
	}
	all := exportRecords(t, s, st.ID, true)
	if len(all) != 1 || all[0]["skipped"] != "true" || all[0]["closer"] != "" || all[0]["kind"] != study.KindDesign {
		t.Errorf("all answers: %v; want one skipped design row", all)
	}
	if row := participantRow(t, s, st.ID, "a"); row.Answered != 1 || row.Skipped != 1 {
		t.Errorf("A: %d answered, %d skipped; want 1, 1", row.Answered, row.Skipped)
	}
	var pending int
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(taken), 0) FROM design_pool WHERE study_id = $1`, st.ID).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 2 { // A's second question and B's
		t.Errorf("design_pool counts %d leases out, want 2", pending)
	}
}

// Quality settings are checked: shares 0-50%, question numbers within the
// questions per participant, a share or numbers.
func TestQualitySettingsChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 4, 10)
	for _, q := range []study.QualityControl{
		{CatchPercent: 51}, {RepeatPercent: -1}, {CatchAt: []int{0}}, {RepeatAt: []int{11}},
		{CatchPercent: 10, CatchAt: []int{2}}, {CatchAt: []int{1, 2, 3, 4, 5, 6}},
	} {
		in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 10, Quality: q}
		if _, err := s.UpdateStudy(ctx, st.ID, in); collect.KindOf(err) != study.KindInvalid {
			t.Errorf("%+v: %v, want KindInvalid", q, err)
		}
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 10,
		Quality: study.QualityControl{CatchAt: []int{5, 2, 5}, RepeatPercent: 20, CantDecide: true}}
	got, err := s.UpdateStudy(ctx, st.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Quality.CatchAt, []int{2, 5}) || got.Quality.RepeatPercent != 20 || !got.Quality.CantDecide {
		t.Errorf("stored %+v", got.Quality)
	}
}
