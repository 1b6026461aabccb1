package web_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/triplet"
)

// lineTriplets is a triplet CSV of n items on a line (1-D truth) answered
// by triplet.Oracle with 5% wrong answers: m random questions from p
// participants over an hour.
func lineTriplets(n, m, p int, seed uint64) []byte {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, n, 1, 1)
	o := triplet.NewOracle(x, 0.05, seed+1)
	var b bytes.Buffer
	b.WriteString("anchor,closer,farther,participant,response_ms,answered_at\n")
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for i := range m {
		a, j, k := triplet.RandomQuestion(rng, n)
		t := o.Answer(a, j, k)
		at := start.Add(time.Duration(i) * time.Hour / time.Duration(m))
		fmt.Fprintf(&b, "%d,%d,%d,w%02d,%d,%s\n", t.Anchor, t.Closer, t.Farther, i%p, 600+rng.IntN(3000), at.Format(time.RFC3339Nano))
	}
	return b.Bytes()
}

// TestDashboardTrust: a study of 36 items on a line (the size of the issue
// 28 study whose embedding.csv held ±1e10) with its trust settings saved
// through the dashboard's form is recomputed through River; the dashboard
// then shows the Dimensions section suggesting d = 1 (the truth; the
// embedding stays at the pinned d = 2), the uncertainty (ellipses on the
// embedding, the neighbours' stability in the gallery) and the projection
// sentence, and embedding.csv is in embed.Normalize's form: every |x| ≤ 10
// and a root-mean-square radius of 1.
func TestDashboardTrust(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, true)
	admin := a.admin()
	const n, m, p = 36, 3000, 30
	res := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "line", "title": "Line"}, lineTriplets(n, m, p, 28), "t.csv")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", res.StatusCode, res.body)
	}
	st, err := a.store.StudyBySlug(context.Background(), "line")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"min_new_answers": {"200"}, "max_age_minutes": {"10"}, "method": {"tste"}, "dim": {"2"}, "clusters": {"0"},
		"trust_max_dim": {"3"}, "trust_folds": {"5"}, "bootstrap_reps": {"20"}, "project": {"1"}, "target_error_pct": {""}}
	if r := a.do(admin, "POST", "/admin/studies/line/dashboard/settings", form, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d %.400s", r.StatusCode, r.body)
	}
	if rs, err := a.store.RecomputeSettings(context.Background(), st.ID); err != nil || rs.Trust.MaxDim != 3 || rs.Trust.Bootstrap != 20 || !rs.Trust.Project || rs.Trust.TargetError != 0 {
		t.Fatalf("trust settings saved: %+v, %v", rs.Trust, err)
	}
	if r := a.do(admin, "POST", "/admin/studies/line/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d %s", r.StatusCode, r.body)
	}
	waitDone(t, a.store, jobs, st.ID, 1)

	page := a.do(admin, "GET", "/admin/studies/line/dashboard", nil, nil)
	if page.StatusCode != 200 {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	for _, want := range []string{`id="dimensions"`, "Suggested: d = 1,", "set it to 1 below", `id="dimensions-plot"`, `class="mark"`,
		`id="uncertainty"`, "20 bootstrap refits of the embedding on participants", "<ellipse", "Stable in",
		`id="projection-sentence"`, "more answers", "With twice the answers (6,000 in all)",
		`name="trust_max_dim"`, `name="bootstrap_reps" min="0" max="1000" value="20"`,
		// Plots that read on their own: the scatters' axes and legends.
		"dimension 1 (unit: the map&#39;s root-mean-square radius)", ">dimension 2<", ">90% of refits<", `<path class="swatch ellipse"`,
		">k1 principal component 1<", ">k2 principal component 2<", ">held-out error (share wrong)<"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	// Which sentence depends on the held-out split, a hash of the answers'
	// random ids: on these answers the curve is near its floor, so either
	// the count towards the target or "levelled off" (TestProjectionSentence
	// checks each sentence on fixed figures).
	if !(strings.Contains(page.body, "participants at 100 questions each") && strings.Contains(page.body, "to bring the held-out error from")) &&
		!strings.Contains(page.body, "The learning curve has levelled off") {
		i := strings.Index(page.body, `id="projection-sentence"`)
		t.Errorf("no projection sentence: %.600s", page.body[max(i, 0):])
	}
	// The learning curve's bands: the measured points' intervals on the
	// held-out answers and the fit's prediction interval.
	curve := section(t, page.body, `<figure class="plot-card" id="projection-plot">`)
	for _, want := range []string{`<path class="band s1"`, `<path class="band s2"`, "measured (95% interval)", "fitted, projected (80% interval)"} {
		if !strings.Contains(curve, want) {
			t.Errorf("the learning curve lacks %q", want)
		}
	}
	if got := strings.Count(page.body, "<ellipse"); got != n {
		t.Errorf("%d ellipses, want one per item (%d)", got, n)
	}

	emb := readCSV(t, a.do(admin, "GET", "/admin/studies/line/embedding.csv", nil, nil).body)
	if len(emb) != n+1 {
		t.Fatalf("embedding.csv: %d rows", len(emb))
	}
	var maxAbs, ss float64
	for _, row := range emb[1:] {
		for _, c := range row[2:] {
			x, err := strconv.ParseFloat(c, 64)
			if err != nil {
				t.Fatal(err)
			}
			maxAbs, ss = math.Max(maxAbs, math.Abs(x)), ss+x*x
		}
	}
	if rms := math.Sqrt(ss / n); maxAbs > 10 || math.Abs(rms-1) > 1e-6 {
		t.Errorf("embedding.csv: max |x| %.3g (want ≤ 10), RMS radius %.6f (want 1)", maxAbs, rms)
	}
}
