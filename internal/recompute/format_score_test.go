package recompute_test

import (
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestRunScoresTrialsInTheirFormat: a run of an odd-one-out and of a rank
// study (issue 27) scores its held-out trials in their own format, beside
// the derived triplets' error: error-free answers over points in the
// plane are predicted far above chance (1/3 for odd-one-out, 1/5 for
// rank 5-choose-2), on as many trials as the held-out share holds; a
// triplet study has no such score.
func TestRunScoresTrialsInTheirFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, name string
		chance       float64
	}{{"odd-one-out", "odd-one-out accuracy", 1.0 / 3}, {"rank:5:2", "rank top-1 accuracy", 0.2}, {"triplet", "", 0}} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, _ := pgtest.NewDB(t)
			store := collect.New(pool)
			const n = 12
			st, err := store.CreateStudy(ctx, study.StudyInput{Slug: "fs", Title: "fs", QuestionsPerParticipant: 30, Status: study.StatusOpen,
				Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			if _, rej, err := store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
				t.Fatal(rej, err)
			}
			if err := store.SetRecomputeSettings(ctx, st.ID, study.RecomputeSettings{MinNewAnswers: 100000, MaxAge: 30 * 24 * time.Hour,
				Method: "tste", Dim: 2}); err != nil {
				t.Fatal(err)
			}
			x := triplet.Gaussian(triplet.NewRand(5), n, 2, 1)
			for range 20 {
				p, _, err := store.CreateParticipant(ctx, st.ID, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				for {
					pr, err := store.Next(ctx, p.ID)
					if err != nil {
						t.Fatal(err)
					}
					q := pr.Question
					if q == nil {
						break
					}
					in := study.AnswerInput{QuestionID: q.ID}
					if tc.format == "triplet" {
						in.Closer = q.Options[0].Index
						if triplet.SqDist(x, q.Anchor.Index, q.Options[1].Index) < triplet.SqDist(x, q.Anchor.Index, q.Options[0].Index) {
							in.Closer = q.Options[1].Index
						}
					} else {
						in.Choices = trialChoices(x, q)
					}
					if _, err := store.Answer(ctx, p.ID, in); err != nil {
						t.Fatal(err)
					}
				}
			}
			id, err := recompute.Run(ctx, store, st.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			blob, err := store.RunResult(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			res, err := recompute.Decode(blob)
			if err != nil {
				t.Fatal(err)
			}
			fs := res.FormatScore
			if tc.name == "" {
				if fs != nil {
					t.Fatalf("a triplet study has a format score %+v", *fs)
				}
				return
			}
			// 600 trials, a tenth held out: about 60 (binomial, ±3 sd).
			if fs == nil || fs.Name != tc.name || fs.Chance != tc.chance || fs.Trials < 30 || fs.Trials > 100 || fs.Value == nil {
				t.Fatalf("format score %+v", fs)
			}
			if *fs.Value < tc.chance+0.3 {
				t.Fatalf("%s %.2f on %d held-out trials of error-free answers; chance %.2f", fs.Name, *fs.Value, fs.Trials, fs.Chance)
			}
			if res.Heldout == 0 || res.HeldoutError == nil {
				t.Fatalf("no held-out triplets beside the trials: %d", res.Heldout)
			}
		})
	}
}
