package web

import (
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/study"
)

func TestDashboardFormat(t *testing.T) {
	t.Parallel()
	share := func(x float64) *float64 { return &x }
	// Expected values by hand from each function's rule.
	for _, c := range []struct{ name, got, want string }{
		{"ms below a second", msText(812.4), "812 ms"},
		{"ms from a second", msText(1000), "1.0 s"},
		{"ms of 12.345 s", msText(12345), "12.3 s"},
		{"ms unknown", msText(math.NaN()), "–"},
		{"pct", pct(share(0.256)), "26%"},
		{"pct unknown", pct(nil), "–"},
		{"contradictions 3 of 2954", contradictionShare(study.Stats{Comparisons: 2954, Contradictions: 3}), "0.1%"},
		{"contradictions 1 of 8", contradictionShare(study.Stats{Comparisons: 8, Contradictions: 1}), "12.5%"},
		{"contradictions of none", contradictionShare(study.Stats{}), "0%"},
		// 75 s: under 10 minutes, at least 10 s: whole seconds.
		{"interval 75 s", intervalNote(75), "per 1m15s, UTC"},
		// 754.3 s = 12.57 min: at least 10 minutes: whole minutes.
		{"interval 754.3 s", intervalNote(754.3), "per 13m0s, UTC"},
		// 30 h: whole hours.
		{"interval 30 h", intervalNote(30 * 3600.4), "per 30h0m0s, UTC"},
		// 12.3 ms: under 10 s: whole milliseconds.
		{"interval 12.3 ms", intervalNote(0.0123), "per 12ms, UTC"},
		// Coverage rounds down, as on the study page: 99.5% is not done.
		{"landmark progress", designProgress(study.DesignStatus{Started: true, Progress: study.DesignProgress{
			Landmark: &landmark.Progress{Answered: 199, Needed: 200, Covered: 40, Comparisons: 45}}}),
			"199 of 200 answers (99%), 40 of 45 comparisons covered"},
		{"label that is the index", pointLabel("7", 7), "7"},
		{"label", pointLabel("red <disk>", 7), "red <disk> (#7)"},
		{"heat map of all items", heatmapNote(40, 40), "items in cluster order"},
		// 1000 items in 120 cells: blocks of ceil(1000 / 120) = 9.
		{"heat map in blocks", heatmapNote(1000, 120), "items in cluster order, averaged over blocks of about 9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
}
