package web_test

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// TestDashboardRunBandAndDendrogramLegend renders the dashboard of a
// study with answers after a recompute: the run stores the number of
// held-out answers its held-out error was measured on, the per-run
// learning curve shades that error's 95% Wilson interval with a legend
// entry saying so (the interval containing the error, narrower than the
// whole range), and the dendrogram has a legend of its leaves' colours,
// one entry per cluster of the run.
func TestDashboardRunBandAndDendrogramLegend(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, true)
	admin := a.admin()
	const n, m, p = 24, 1500, 15
	res := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "bands", "title": "Bands"}, lineTriplets(n, m, p, 41), "t.csv")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", res.StatusCode, res.body)
	}
	ctx := context.Background()
	st, err := a.store.StudyBySlug(ctx, "bands")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"min_new_answers": {"200"}, "max_age_minutes": {"10"}, "method": {"tste"}, "dim": {"2"}, "clusters": {"3"}}
	if r := a.do(admin, "POST", "/admin/studies/bands/dashboard/settings", form, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d %.400s", r.StatusCode, r.body)
	}
	if r := a.do(admin, "POST", "/admin/studies/bands/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d %s", r.StatusCode, r.body)
	}
	waitDone(t, a.store, jobs, st.ID, 1)
	runs, err := a.store.Runs(ctx, st.ID)
	if err != nil || len(runs) != 1 || runs[0].Status != study.RunDone {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	run := runs[0]
	blob, err := a.store.RunResult(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	if run.HeldoutError == nil || run.HeldoutAnswers == nil || *run.HeldoutAnswers != out.Heldout || out.Heldout == 0 {
		t.Fatalf("the run's held-out error %v on %v answers; its result judged %d", run.HeldoutError, run.HeldoutAnswers, out.Heldout)
	}

	page := a.do(admin, "GET", "/admin/studies/bands/dashboard", nil, nil)
	if page.StatusCode != 200 {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	curve := section(t, page.body, `<figure class="plot-card" id="learning"`)
	if !strings.Contains(curve, ">held-out error (95% interval)<") || !strings.Contains(curve, "95% Wilson interval") {
		t.Errorf("the learning curve has no legend entry or note for its band: %s", curve)
	}
	bm := regexp.MustCompile(`<path class="band s1" d="M([0-9.]+) ([0-9.]+)L([0-9.]+) ([0-9.]+)Z"`).FindStringSubmatch(curve)
	mm := regexp.MustCompile(`<circle class="marker s1" cx="([0-9.]+)" cy="([0-9.]+)"`).FindStringSubmatch(curve)
	if bm == nil || mm == nil {
		t.Fatalf("no band or marker of the held-out error: %s", curve)
	}
	num := func(s string) float64 { x, _ := strconv.ParseFloat(s, 64); return x }
	top, bottom, x, y := num(bm[2]), num(bm[4]), num(mm[1]), num(mm[2])
	if num(bm[1]) != x || num(bm[3]) != x || !(top < y && y < bottom) {
		t.Errorf("band %s does not span the marker at (%g, %g)", bm[0], x, y)
	}
	// The y axis starts at 0 (its tick's text sits 4 px below the line):
	// the band is as tall against the marker's height above 0 as the
	// Wilson interval against the error.
	e := *run.HeldoutError
	lo, hi := dashboard.Wilson(int(math.Round(e*float64(out.Heldout))), out.Heldout, dashboard.Z95)
	zm := regexp.MustCompile(`<text class="tick" x="[0-9.]+" y="([0-9.]+)" text-anchor="end">0</text>`).FindStringSubmatch(curve)
	if zm == nil {
		t.Fatalf("no 0 tick on the y axis: %s", curve)
	}
	zero := num(zm[1]) - 4
	if got, want := (bottom-top)/(zero-y), (hi-lo)/e; math.Abs(got-want) > 0.05*want+0.01 {
		t.Errorf("band %g px tall, marker %g px above 0: ratio %.3f, want the Wilson interval's %.3f (%g–%g around %g on %d answers)",
			bottom-top, zero-y, got, want, lo, hi, e, out.Heldout)
	}

	tree := section(t, page.body, `<figure class="plot-card wide" id="dendrogram"`)
	if !strings.Contains(tree, ">leaf colour:<") {
		t.Fatalf("the dendrogram has no colour legend: %.2000s", tree)
	}
	k := 0
	for _, c := range out.Clusters {
		k = max(k, c+1)
	}
	if k < 2 || strings.Count(tree, `<rect class="swatch"`) != k || !strings.Contains(tree, ">cluster "+strconv.Itoa(k)+"<") {
		t.Errorf("dendrogram legend: %d swatches, want one per cluster (%d)", strings.Count(tree, `<rect class="swatch"`), k)
	}
}
