package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

// A study with arms (created through the store) keeps its arms and
// held-out share when a study form without the arms and held-out fields
// (a script's post) is saved, before and after its first question; its study page and
// dashboard show arm 0's design as before; participants.csv names each
// participant's arm in its last column.
func TestArmsStudyThroughTheForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	arms := []study.Arm{
		{Name: "lm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 2, Landmarks: 3}, Share: 0.5},
		{Name: "rnd", Design: study.DesignRandom, Share: 0.5},
	}
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "arms", Title: "Arms", QuestionsPerParticipant: 5,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:8]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	form := url.Values{"title": {"Arms renamed"}, "slug": {"arms"}, "questions_per_participant": {"5"},
		"status": {"open"}, "design": {"landmark-k1"}, "landmarks": {"3"}, "seed": {"2"}}
	save := func(want int) {
		t.Helper()
		if res := a.do(c, "POST", "/admin/studies/arms", form, nil); res.StatusCode != want {
			t.Fatalf("saving the form: %d, want %d: %s", res.StatusCode, want, res.body)
		}
		got, err := a.store.StudyBySlug(ctx, "arms")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Arms) != 2 || got.Arms[1].Name != "rnd" || got.HeldoutShare != 0.2 {
			t.Fatalf("after saving the form: arms %+v, held out %g", got.Arms, got.HeldoutShare)
		}
	}
	save(http.StatusSeeOther)
	for range 2 {
		p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		answerSome(t, a.store, p, 1)
	}
	form.Set("title", "Arms again")
	save(http.StatusSeeOther)
	for _, path := range []string{"/admin/studies/arms", "/admin/studies/arms/dashboard"} {
		if res := a.do(c, "GET", path, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(res.body, "landmark-k1") {
			t.Errorf("%s: %d, or no landmark-k1", path, res.StatusCode)
		}
	}
	res := a.do(c, "GET", "/admin/studies/arms/participants.csv", nil, nil)
	recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("participants.csv: %v, %d rows", err, len(recs))
	}
	if !slices.Equal(recs[0], web.ParticipantsColumns) || recs[0][len(recs[0])-1] != "arm" {
		t.Fatalf("participants.csv header %v", recs[0])
	}
	if recs[1][len(recs[1])-1] != "lm" || recs[2][len(recs[2])-1] != "rnd" {
		t.Fatalf("participants.csv arms %q, %q; want lm, rnd", recs[1][len(recs[1])-1], recs[2][len(recs[2])-1])
	}
}
