package studyfile

import (
	"bytes"
	"context"
	"encoding/csv"
	"reflect"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// A study with arms and a held-out share travels in its bundle: the
// imported study has the same arms (names, designs, settings, shares) and
// share, its participants keep their arms, its answers their designs
// (held-out ones included, still kept out of the votes), and its
// triplets.csv says the same design, kind and arm on every row; joining the
// imported study goes on from the participants it holds.
func TestBundleKeepsArms(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	collect.RegisterDesigns(s)
	ctx := context.Background()
	arms := []study.Arm{
		{Name: "lm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 3, Landmarks: 3, Repeats: 2}, Share: 0.5},
		{Name: "act", Design: study.DesignActive, Config: study.DesignConfig{Seed: 4, Warmup: 2}, Share: 0.3},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.2},
	}
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "arms", Title: "Arms", QuestionsPerParticipant: 10,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:8]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	for range 5 {
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				break
			}
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	again, rep, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	st, err = s.StudyByID(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Arms, st.Arms) || again.HeldoutShare != 0.3 || again.Design != study.DesignLandmarkK1 || rep.Answers != 50 {
		t.Fatalf("imported arms %+v, held out %g, design %s, %d answers; want %+v", again.Arms, again.HeldoutShare, again.Design, rep.Answers, st.Arms)
	}
	armsOf := func(id int64) []int {
		ps, err := s.ListParticipants(ctx, id, 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range slices.Backward(ps) {
			out = append(out, p.Arm)
		}
		return out
	}
	shares := []float64{0.5, 0.3, 0.2}
	counts := make([]int, 3)
	var want []int
	for range 6 {
		a := design.NextArm(shares, counts)
		want = append(want, a)
		counts[a]++
	}
	if a, b := armsOf(st.ID), armsOf(again.ID); !slices.Equal(a, b) || !slices.Equal(a, want[:5]) {
		t.Fatalf("participants' arms %v, imported %v; want %v", a, b, want[:5])
	}
	export := func(id int64) [][]string {
		var buf bytes.Buffer
		if err := s.ExportCSVWith(ctx, id, &buf, true); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	a, b := export(st.ID), export(again.ID)
	if len(a) != len(b) || len(a) != 51 {
		t.Fatalf("%d and %d rows", len(a), len(b))
	}
	col := func(name string) int { return slices.Index(study.ExportColumns, name) }
	heldout := 0
	for i := 1; i < len(a); i++ {
		for _, name := range []string{"anchor", "closer", "farther", "left", "right", "design", "kind", "arm", "response_ms", "answered_at"} {
			if a[i][col(name)] != b[i][col(name)] {
				t.Fatalf("row %d, %s: %q, imported %q", i, name, a[i][col(name)], b[i][col(name)])
			}
		}
		if a[i][col("kind")] == study.KindHeldout {
			heldout++
		}
	}
	if heldout != 15 { // 3 of every participant's 10
		t.Fatalf("%d held-out answers, want 15", heldout)
	}
	var votes, importedVotes int
	if err := pool.QueryRow(ctx, `SELECT (SELECT sum(j_closer + k_closer) FROM votes WHERE study_id = $1),
		(SELECT sum(j_closer + k_closer) FROM votes WHERE study_id = $2)`, st.ID, again.ID).Scan(&votes, &importedVotes); err != nil {
		t.Fatal(err)
	}
	if votes != 50-heldout || importedVotes != votes {
		t.Fatalf("votes %d, imported %d; want %d (the answers not held out)", votes, importedVotes, 50-heldout)
	}
	// The imported study's arm counts go on from its participants.
	if err := s.SetStudyStatus(ctx, again.ID, study.StatusOpen); err != nil {
		t.Fatal(err)
	}
	p, _, err := s.CreateParticipant(ctx, again.ID, "", nil)
	if err != nil || p.Arm != want[5] {
		t.Fatalf("the next participant of the imported study went to arm %d, %v; want %d", p.Arm, err, want[5])
	}
}
