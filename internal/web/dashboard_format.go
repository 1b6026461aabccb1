package web

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// The dashboard's figures as text: shares, times, the design's progress and
// the notes under the plots.

// pct is a share in whole percent ("–" when unknown).
func pct(x *float64) string {
	if x == nil {
		return "–"
	}
	return format.Percent(*x, 0)
}

// msText is a time in milliseconds, in seconds from a second on ("–" for
// NaN).
func msText(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	if x >= 1000 {
		return fmt.Sprintf("%.1f s", x/1000)
	}
	return fmt.Sprintf("%.0f ms", x)
}

// contradictionShare is the share of the distinct comparisons answered
// both ways.
func contradictionShare(st study.Stats) string {
	return format.PercentOfFixed(st.Contradictions, st.Comparisons, 1)
}

// designProgress says how far a landmark or basis design got.
func designProgress(ds study.DesignStatus) string {
	p := ds.Progress
	switch {
	case !ds.Started:
		return "not started"
	case p.Done:
		if p.Basis != nil {
			return fmt.Sprintf("complete; d̂ = %d", p.Basis.DHat)
		}
		return "complete"
	case p.Basis != nil:
		return fmt.Sprintf("%s phase, %d axes so far (d̂ = %d)", p.Basis.Phase, p.Basis.Axes, p.Basis.DHat)
	case p.Landmark != nil:
		// Rounded down, as the study page's coverage: 100% only when done.
		return fmt.Sprintf("%d of %d answers (%s), %d of %d comparisons covered",
			p.Landmark.Answered, p.Landmark.Needed, format.PercentOf(p.Landmark.Answered, p.Landmark.Needed), p.Landmark.Covered, p.Landmark.Comparisons)
	}
	return "started"
}

// pointLabel is item i's label on a scatter plot, with its index unless
// the label is the index.
func pointLabel(label string, i int) string {
	if label != strconv.Itoa(i) {
		return fmt.Sprintf("%s (#%d)", label, i)
	}
	return label
}

// embeddingNote describes the embedding plot.
func embeddingNote(res *recompute.Result) string {
	note := fmt.Sprintf("%s in %d-D", res.Method, res.Dim)
	if res.Dim > 2 {
		note += " (first two dimensions)"
	}
	if res.HeldoutError != nil {
		note += fmt.Sprintf("; held-out error %s on %d answers", format.Percent(*res.HeldoutError, 1), res.Heldout)
	}
	if fs := res.FormatScore; fs != nil && fs.Value != nil {
		note += fmt.Sprintf("; %s %s on %d held-out trials (chance %s)", fs.Name, format.Percent(*fs.Value, 1), fs.Trials, format.Percent(fs.Chance, 0))
	}
	return note + "; framed by cluster; scroll to zoom, drag to pan"
}

// basisNote describes the basis design's plot.
func basisNote(res *recompute.Result) string {
	note := "the basis design's own coordinates (first two axes)"
	if res.BasisDHat != nil {
		state := "so far"
		if res.BasisComplete {
			state = "final"
		}
		note = fmt.Sprintf("%s; d̂ = %d (%s)", note, *res.BasisDHat, state)
	}
	return note
}

// heatmapNote describes the heat map of n items drawn in side cells.
func heatmapNote(n, side int) string {
	note := "items in cluster order"
	if side < n {
		note += fmt.Sprintf(", averaged over blocks of about %d", (n+side-1)/side)
	}
	return note
}

// intervalNote names the interval of step seconds of the answers-over-time
// bars, rounded to whole units ten or more of which make it up.
func intervalNote(step float64) string {
	d := time.Duration(step * float64(time.Second))
	for _, unit := range []time.Duration{time.Hour, time.Minute, time.Second, time.Millisecond} {
		if d >= 10*unit || unit == time.Millisecond {
			d = d.Round(unit)
			break
		}
	}
	return fmt.Sprintf("per %s, UTC", d)
}

// deref is *x, NaN for nil.
func deref(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}
