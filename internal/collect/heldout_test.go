package collect_test

import (
	"context"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// Held-out questions (a study with a landmark arm and a random arm, 20% of
// every participant's questions held out): they are at exactly the
// positions design.HeldOut gives for the study's id and the participant,
// in both arms, through Next and AnswerNext with questions issued ahead;
// their answers are stored and exported (design and kind heldout, the
// participant's arm) but reach neither the votes nor either design, and
// RunAnswers says which they are.
func TestHeldOutQuestions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	const n, per, h = 10, 20, 0.2
	arms := []study.Arm{
		{Name: "lm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 5, Landmarks: 3}, Share: 0.5},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.5},
	}
	st := armStudy(t, s, "heldout", arms, h, n, per)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(4), n, 2, 1), 0, 2)
	heldout := 0
	var given []triplet.Triplet // every triplet answered
	for i := range 6 {
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; !pr.Done; pos++ {
			q := pr.Question
			want := design.HeldOut(h, uint64(st.ID), uint64(p.ID), pos)
			if (q.Design == study.DesignHeldout) != want {
				t.Fatalf("participant %d (arm %d), question %d: design %s, held out by design.HeldOut: %v", i, p.Arm, pos, q.Design, want)
			}
			if !want && q.Design != arms[p.Arm].Design && q.Design != study.DesignFallback {
				t.Fatalf("participant %d of arm %d got a %s question", i, p.Arm, q.Design)
			}
			if want {
				heldout++
			}
			c := answerFor(o, q)
			f := q.Options[0].Index
			if c == f {
				f = q.Options[1].Index
			}
			given = append(given, triplet.Triplet{Anchor: q.Anchor.Index, Closer: c, Farther: f})
			in := study.AnswerInput{QuestionID: q.ID, Closer: c}
			if i%2 == 0 {
				_, pr, err = s.AnswerNext(ctx, p.ID, in)
			} else if _, err = s.Answer(ctx, p.ID, in); err == nil {
				pr, err = s.Next(ctx, p.ID)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if heldout != 6*per*h {
		t.Fatalf("%d held-out questions, want %g", heldout, 6*per*h)
	}
	recorded(t, s)
	// The votes count exactly the answers that were not held out.
	recs := exportRecords(t, s, st.ID, false)
	votes, err := s.Votes(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := triplet.NewVotes()
	exported := 0
	for _, r := range recs {
		if (r["design"] == study.DesignHeldout) != (r["kind"] == "heldout") {
			t.Fatalf("export row %v: design and kind disagree", r)
		}
		if r["kind"] == "heldout" {
			exported++
			continue
		}
		want.Add(tripletOf(t, r))
	}
	if exported != heldout || len(recs) != len(given) {
		t.Fatalf("export: %d rows, %d held out; want %d, %d", len(recs), exported, len(given), heldout)
	}
	if got, w := votes.Keys(), want.Keys(); len(got) != len(w) {
		t.Fatalf("votes on %d comparisons, the answers not held out on %d", len(got), len(w))
	}
	for _, k := range want.Keys() {
		if votes.Get(k) != want.Get(k) {
			t.Fatalf("votes %v on %v, want %v", votes.Get(k), k, want.Get(k))
		}
	}
	// No design saw a held-out answer: arm 0's events are exactly its
	// participants' answers to its questions.
	events := armEvents(t, pool, st.ID, 0)
	slices.SortFunc(events, tripletOrder)
	if w := armAnswers(t, pool, st.ID, 0, study.DesignLandmarkK1); len(events) == 0 || !slices.Equal(events, w) {
		t.Fatalf("the landmark arm recorded %d answers, its questions got %d", len(events), len(w))
	}
	var inbox int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_inbox WHERE study_id = $1`, st.ID).Scan(&inbox); err != nil || inbox != 0 {
		t.Fatalf("%d answers left in the inbox, %v", inbox, err)
	}
	// RunAnswers gives the recompute each answer's design and arm.
	ras, err := s.RunAnswers(ctx, st.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	byArm := map[int]int{}
	held := 0
	for _, a := range ras {
		byArm[a.Arm]++
		if a.Design == study.DesignHeldout {
			held++
		}
	}
	if held != heldout || byArm[0] == 0 || byArm[1] == 0 || byArm[0]+byArm[1] != len(given) {
		t.Fatalf("RunAnswers: %d held out, by arm %v", held, byArm)
	}
	// The export names each answer's arm.
	arms0 := map[string]string{}
	people, err := s.ListParticipants(ctx, st.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range people {
		arms0[p.PublicID] = arms[p.Arm].Name
	}
	for _, r := range recs {
		if r["arm"] != arms0[r["participant"]] {
			t.Fatalf("export row of %s says arm %q, want %q", r["participant"], r["arm"], arms0[r["participant"]])
		}
	}
	all := exportRecords(t, s, st.ID, true)
	if len(all) != len(recs) || all[0]["arm"] == "" || all[0]["skipped"] != "false" {
		t.Fatalf("all answers: %d rows, first %v", len(all), all[0])
	}
}

// tripletOf reads an export row's triplet.
func tripletOf(t *testing.T, r map[string]string) triplet.Triplet {
	t.Helper()
	var tr triplet.Triplet
	for _, f := range []struct {
		dst  *int
		name string
	}{{&tr.Anchor, "anchor"}, {&tr.Closer, "closer"}, {&tr.Farther, "farther"}} {
		v := 0
		for _, c := range r[f.name] {
			v = 10*v + int(c-'0')
		}
		*f.dst = v
	}
	return tr
}
