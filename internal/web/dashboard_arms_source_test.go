package web_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestDesignsComparedOneSource is issue 28's "Designs compared contradicts
// itself": after two recomputes of a study with two arms, one participant
// excluded before the second, every error the sentence names is in its
// arm's row of the table, and the table's participants and answers are
// those the latest run fitted (the curve's last points), the excluded
// participant left out as the curve leaves it out.
func TestDesignsComparedOneSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	arms := []study.Arm{{Name: "smart", Design: study.DesignRandom, Share: 0.5}, {Name: "plain", Design: study.DesignRandom, Share: 0.5}}
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "src", Title: "Source", QuestionsPerParticipant: 20,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	x := triplet.Gaussian(triplet.NewRand(9), n, 2, 1)
	rng := triplet.NewRand(10)
	oracle := func(q, l, r int) int { // 20% wrong, so that the arms' errors differ
		near := triplet.SqDist(x, q, l) < triplet.SqDist(x, q, r)
		if rng.IntN(5) == 0 {
			near = !near
		}
		if near {
			return l
		}
		return r
	}
	crowdAnswers(t, a.store, st.ID, 4, oracle)
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	crowdAnswers(t, a.store, st.ID, 6, oracle)
	if err := a.store.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := a.store.RunAnswers(ctx, st.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.store.SetExcluded(ctx, st.ID, all[0].PublicID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	_, blob, err := a.store.LatestResult(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 2 {
		t.Fatalf("%d arms fitted", len(res.Arms))
	}

	page := a.do(c, "GET", "/admin/studies/src/dashboard", nil, nil)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	sec := section(t, page.body, `<section class="designs" id="designs">`)
	summary := section(t, sec, `<p id="designs-summary">`)
	rows := tableCells(sec)
	if len(rows) != 2 {
		t.Fatalf("arms table %q", rows)
	}
	named := regexp.MustCompile(`(smart|plain) ([0-9.]+%)`).FindAllStringSubmatch(summary, -1)
	if len(named) < 2 {
		t.Fatalf("the sentence names %d errors: %s", len(named), summary)
	}
	for _, m := range named {
		i := 0
		if m[1] == "plain" {
			i = 1
		}
		if !slices.ContainsFunc(rows[i], func(c string) bool { return strings.Contains(c, m[2]) }) {
			t.Errorf("the sentence says %s %s; the table's row %q has no such error", m[1], m[2], rows[i])
		}
	}
	// The held-out answers the table counts are those of the participants
	// who are not excluded, as the run counts them.
	kept, err := a.store.RunAnswers(ctx, st.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	heldout, heldoutAll := make([]int, 2), make([]int, 2)
	for _, x := range kept {
		if x.Design == study.DesignHeldout {
			heldout[x.Arm]++
		}
	}
	for _, x := range all {
		if x.Design == study.DesignHeldout {
			heldoutAll[x.Arm]++
		}
	}
	if slices.Equal(heldout, heldoutAll) {
		t.Fatalf("the excluded participant had no held-out answers (%v): the test tests nothing", heldout)
	}
	counts, err := a.store.ArmAnswerCounts(ctx, st.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Columns: arm, design, share, participants, answers, held-out answers.
	for i, r := range res.Arms {
		if counts[i].Heldout != heldout[i] {
			t.Errorf("arm %s: the store counts %d held-out answers without the excluded participant, want %d", r.Name, counts[i].Heldout, heldout[i])
		}
		if got := rows[i][5]; got != strconv.Itoa(heldout[i]) {
			t.Errorf("arm %s: table says %s held-out answers, want %d (the excluded participant's %d left out)", r.Name, got, heldout[i], heldoutAll[i]-heldout[i])
		}
		if got := rows[i][3]; got != strconv.Itoa(r.Participants) {
			t.Errorf("arm %s: table says %s participants, the run fitted %d", r.Name, got, r.Participants)
		}
		if got := rows[i][4]; got != strconv.Itoa(r.Answers) {
			t.Errorf("arm %s: table says %s answers, the run fitted %d (the curve's last point)", r.Name, got, r.Answers)
		}
	}
}

// tableCells are the body rows of the first table in s, each a list of its
// cells' text (tags stripped).
func tableCells(s string) [][]string {
	var out [][]string
	tag := regexp.MustCompile(`<[^>]*>`)
	body := s[strings.Index(s, "<tbody>"):]
	for _, tr := range strings.Split(body, "<tr")[1:] {
		tr = tr[:strings.Index(tr, "</tr>")]
		var cells []string
		for _, td := range strings.Split(tr, "<td")[1:] {
			td = td[strings.Index(td, ">")+1:]
			td = td[:strings.Index(td, "</td>")]
			cells = append(cells, strings.Join(strings.Fields(tag.ReplaceAllString(td, " ")), " "))
		}
		out = append(out, cells)
	}
	return out
}
