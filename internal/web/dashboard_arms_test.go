package web_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// crowdAnswers has k new participants of study st answer all their
// questions as the points x say.
func crowdAnswers(t *testing.T, store *collect.Store, studyID int64, k int, x func(a, l, r int) int) {
	t.Helper()
	ctx := context.Background()
	for range k {
		p, _, err := store.CreateParticipant(ctx, studyID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			pr, err := store.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done || pr.Question == nil {
				break
			}
			q := pr.Question
			if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: x(q.Anchor.Index, q.Options[0].Index, q.Options[1].Index)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The dashboard of a study with an active and a random arm and 20% of the
// questions held out, after two recomputes: the "Designs compared" section
// draws a learning curve per arm with a point per run (the runs' stored
// points) and the table gives each arm's name, design, share,
// participants, answers and held-out answers (as the store counts them),
// the latest run's held-out error as stored, and the active arm's warm-up,
// pools and pool left. The study page shows each arm's design status. A
// study of one design without a held-out share has no such section.
func TestDashboardComparesDesigns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	arms := []study.Arm{
		{Name: "smart", Design: study.DesignActive, Config: study.DesignConfig{Seed: 3, Warmup: 1, Pool: 12, Candidates: 30}, Share: 0.5},
		{Name: "plain", Design: study.DesignRandom, Share: 0.5},
	}
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "cmp", Title: "Compare", QuestionsPerParticipant: 20,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	x := triplet.Gaussian(triplet.NewRand(5), n, 2, 1)
	oracle := func(q, l, r int) int {
		if triplet.SqDist(x, q, l) < triplet.SqDist(x, q, r) {
			return l
		}
		return r
	}
	before := a.do(c, "GET", "/admin/studies/cmp/dashboard", nil, nil)
	if before.StatusCode != http.StatusOK || !strings.Contains(before.body, `id="designs"`) ||
		!strings.Contains(before.body, "The curves appear after the first recompute.") {
		t.Fatalf("before any run: %d, no section or no note", before.StatusCode)
	}
	crowdAnswers(t, a.store, st.ID, 4, oracle)
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	crowdAnswers(t, a.store, st.ID, 4, oracle)
	if err := a.store.RecordPending(ctx); err != nil {
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
	if len(res.Arms) != 2 || len(res.Curve) != 4 || len(res.Pools) != 1 || res.Pools[0].Error != "" {
		t.Fatalf("result: arms %d, curve %d, pools %+v", len(res.Arms), len(res.Curve), res.Pools)
	}
	statuses, err := a.store.DesignStatuses(ctx, st)
	if err != nil {
		t.Fatal(err)
	}

	page := a.do(c, "GET", "/admin/studies/cmp/dashboard", nil, nil)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	sec := section(t, page.body, `<section class="designs" id="designs">`)
	// Each arm's points: one per run (its answers grew between the runs).
	for i := range 2 {
		if got := strings.Count(sec, fmt.Sprintf(`<circle class="marker a%d"`, i)); got != 2 {
			t.Errorf("arm %d: %d points on the curve, want 2", i, got)
		}
	}
	p := res.Curve[2]
	if want := fmt.Sprintf("<title>smart: %s at %d</title>", fmtTickText(float64(p.Wrong)/float64(p.Heldout)), p.Answers); !strings.Contains(sec, want) {
		t.Errorf("no point %s", want)
	}
	rows := tableRows(sec)
	if len(rows) != 3 {
		t.Fatalf("arms table %q", rows)
	}
	if !strings.Contains(rows[0], "Warm-up") || !strings.Contains(rows[0], "Pool left") {
		t.Errorf("header %q lacks the active arm's columns", rows[0])
	}
	assigned, err := a.store.ArmParticipants(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range statuses {
		r := res.Arms[i]
		cells := []string{d.ArmName, d.Design, "50%", fmt.Sprint(assigned[i]), fmt.Sprint(d.Answers - d.Heldout), fmt.Sprint(d.Heldout),
			strconv.FormatFloat(math.Round(1000*float64(r.Wrong)/float64(r.Heldout))/10, 'f', -1, 64) + "%", fmt.Sprintf("%d of %d wrong", r.Wrong, r.Heldout)}
		if i == 0 {
			pa := d.Progress.Active
			cells = append(cells, fmt.Sprintf("done (%d)", pa.Warmup), fmt.Sprint(pa.Refreshes), fmt.Sprintf("%d of %d", pa.PoolLeft, pa.PoolSize))
			if pa.Refreshes != 2 {
				t.Errorf("the active arm had %d pools chosen, want one per run", pa.Refreshes)
			}
		}
		for _, cell := range cells {
			if !strings.Contains(rows[i+1], cell) {
				t.Errorf("arm %s's row %q lacks %q", d.ArmName, rows[i+1], cell)
			}
		}
	}
	if !strings.Contains(sec, "At ") || !strings.Contains(sec, "), the held-out error was: smart ") {
		t.Errorf("no comparison in words: %s", section(t, sec, `<p id="designs-summary">`))
	}
	if !strings.Contains(page.body, "2 arms") || !strings.Contains(page.body, "smart (active), plain (random); compared below") {
		t.Error("the overview does not name the arms")
	}

	// The study page: each arm's status.
	studyPage := a.do(c, "GET", "/admin/studies/cmp", nil, nil)
	for _, want := range []string{"Designs compared: 2 arms", `id="arm-smart"`, "Arm smart: active", "Arm plain: random",
		"20% of every participant&#39;s questions are held out", "Chosen questions", "Warm-up"} {
		if !strings.Contains(studyPage.body, want) {
			t.Errorf("the study page lacks %q", want)
		}
	}

	// One design, nothing held out: no section.
	a.study("plain", 5, 5, study.StatusOpen)
	if res := a.do(c, "GET", "/admin/studies/plain/dashboard", nil, nil); strings.Contains(res.body, `id="designs"`) {
		t.Error("a study of one design without held-out questions compares designs")
	}
}

// fmtTickText is the dashboard's number format of a marker's title.
func fmtTickText(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// section is the page's text from the element opened by start to the end
// of its tag's element (the next closing tag of its name at depth 0 is not
// tracked: it returns up to the first matching close).
func section(t *testing.T, body, start string) string {
	t.Helper()
	i := strings.Index(body, start)
	if i < 0 {
		t.Fatalf("no %s", start)
	}
	name := start[1:strings.IndexAny(start, " >")]
	rest := body[i:]
	j := strings.Index(rest, "</"+name+">")
	if j < 0 {
		t.Fatalf("%s not closed", start)
	}
	return rest[:j]
}

// tableRows are the rows of the first table in s, tags stripped.
func tableRows(s string) []string {
	var rows []string
	for _, r := range strings.Split(s, "<tr")[1:] {
		r = r[:strings.Index(r, "</tr>")]
		var b strings.Builder
		in := false
		for _, ch := range r {
			switch {
			case ch == '<':
				in = true
				b.WriteRune(' ')
			case ch == '>':
				in = false
			case !in:
				b.WriteRune(ch)
			}
		}
		rows = append(rows, strings.Join(strings.Fields(b.String()), " "))
	}
	return rows
}
