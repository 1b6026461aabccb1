package plot

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// Point is one item of a scatter plot.
type Point struct {
	X, Y    float64
	Label   string
	Image   string // thumbnail URL, or "" to draw a dot
	Cluster int    // colour; < 0 for none (grey)
	// Cov, when Spread is set, is the covariance of the point's position
	// (xx, xy, yy): an ellipse of SpreadScale standard deviations is drawn
	// under the point.
	Cov    [3]float64
	Spread bool
}

// SpreadScale is the ellipses' radius in standard deviations: √χ²₂(0.9) =
// √(−2 ln 0.1), so that a 2-D normal position falls inside with
// probability 0.9.
var SpreadScale = math.Sqrt(-2 * math.Log(0.1))

// ellipse returns the semi-axes and the angle (degrees, of the first axis
// from the x axis) of the ellipse of the 2×2 covariance c scaled by k: the
// eigen-decomposition of [[xx, xy], [xy, yy]] in closed form.
func ellipse(c [3]float64, k float64) (rx, ry, deg float64) {
	xx, xy, yy := c[0], c[1], c[2]
	m, d := (xx+yy)/2, math.Hypot((xx-yy)/2, xy)
	l1, l2 := m+d, math.Max(m-d, 0)
	return k * math.Sqrt(l1), k * math.Sqrt(l2), 0.5 * math.Atan2(2*xy, xx-yy) * 180 / math.Pi
}

// Scatter draws points at their coordinates with equal aspect ratio in an
// SVG of w×h: thumbnails framed in their cluster's colour (or dots), the
// label on hover (an SVG title) and, for few points, written next to the
// dot. zoomable marks it for dashboard.js's zoom and pan; label names the
// plot for screen readers.
func Scatter(points []Point, w, h float64, zoomable bool, label string) string {
	return ScatterWith(points, w, h, zoomable, label, ScatterOptions{})
}

// ScatterOptions make a scatter plot read on its own: axis labels (the
// coordinates' names and units), a legend of its colours, frames and
// ellipses, and a robust view.
type ScatterOptions struct {
	// XLabel and YLabel name the axes (drawn below and left of the plot;
	// "" for none).
	XLabel, YLabel string
	// Legend explains the colours and marks, one line each, in a margin
	// on the right.
	Legend []LegendEntry
	// Robust fits the view to the 1st–99th percentile of the points'
	// coordinates when the whole range is more than RobustSpan times
	// wider (one outlier would squash the rest): the points outside are
	// drawn at the view's edge as rings (class "outside") and a note says
	// how many. Needs at least RobustMin points.
	Robust bool
}

// LegendEntry is one line of a scatter plot's legend: a swatch of Color
// (a filled dot, a frame or an ellipse, by Kind) and its text.
type LegendEntry struct {
	Color, Text string
	Kind        string // "dot", "frame" or "ellipse"
}

// The robust view's bounds.
const (
	RobustSpan = 2.5
	RobustMin  = 20
	// scatterLegendWidth is the right margin of a scatter plot's legend.
	scatterLegendWidth = 150
)

// robustRange returns the 1st and 99th percentiles of v by rank,
// inwards: the order statistics at ⌈0.01·(n−1)⌉ and ⌊0.99·(n−1)⌋, so
// that of fewer than about a hundred points the smallest and the largest
// are left out (interpolating would pull an outlier's value in).
func robustRange(v []float64) (lo, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	m := float64(len(s) - 1)
	return s[int(math.Ceil(0.01*m))], s[int(math.Floor(0.99*m))]
}

// ScatterWith is Scatter with axis labels, a legend and a robust view
// (opt).
func ScatterWith(points []Point, w, h float64, zoomable bool, label string, opt ScatterOptions) string {
	var b strings.Builder
	class := "scatter"
	if zoomable {
		class += " zoomable"
	}
	svgOpen(&b, w, h, class, label)
	if len(points) == 0 {
		return empty(&b, "no data")
	}
	n := float64(len(points))
	size := math.Max(12, math.Min(48, 0.35*math.Sqrt(w*h/n)))
	hasImg := points[0].Image != ""
	if !hasImg {
		size = 8
	}
	showText := !hasImg && len(points) <= 30
	pad := size/2 + 4
	padRight := pad
	if showText {
		longest := 0
		for _, p := range points {
			longest = max(longest, len([]rune(p.Label)))
		}
		padRight += 6 * float64(min(longest, 24)) // about 6 px per character at 10 px
	}
	var ml, mr, mt, mb float64 // margins for the axis labels and the legend
	if opt.XLabel != "" {
		mb = 22
	}
	if opt.YLabel != "" {
		ml = 18
	}
	if len(opt.Legend) > 0 {
		mr = scatterLegendWidth
	}
	// The view: every point (and ellipse), or with opt.Robust and an
	// outlier, the 1st–99th percentile box widened by a tenth each side.
	view := func(x, y float64) bool { return true }
	if opt.Robust && len(points) >= RobustMin {
		xs, ys := make([]float64, len(points)), make([]float64, len(points))
		for i, p := range points {
			xs[i], ys[i] = p.X, p.Y
		}
		xlo, xhi := robustRange(xs)
		ylo, yhi := robustRange(ys)
		fx, fy := slices.Max(xs)-slices.Min(xs), slices.Max(ys)-slices.Min(ys)
		if fx > RobustSpan*(xhi-xlo) || fy > RobustSpan*(yhi-ylo) {
			dx, dy := 0.1*(xhi-xlo), 0.1*(yhi-ylo)
			xlo, xhi, ylo, yhi = xlo-dx, xhi+dx, ylo-dy, yhi+dy
			view = func(x, y float64) bool { return x >= xlo && x <= xhi && y >= ylo && y <= yhi }
		}
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	outside := 0
	for _, p := range points {
		if !view(p.X, p.Y) {
			outside++
			continue
		}
		// An ellipse's extent along the axes is k·√xx and k·√yy.
		ex, ey := 0.0, 0.0
		if p.Spread {
			ex, ey = SpreadScale*math.Sqrt(math.Max(p.Cov[0], 0)), SpreadScale*math.Sqrt(math.Max(p.Cov[2], 0))
		}
		xmin, xmax = math.Min(xmin, p.X-ex), math.Max(xmax, p.X+ex)
		ymin, ymax = math.Min(ymin, p.Y-ey), math.Max(ymax, p.Y+ey)
	}
	if outside > 0 {
		mt = 18 // the note's line
	}
	// Equal aspect: the larger span decides the scale.
	aw, ah := w-pad-ml-padRight-mr, h-2*pad-mt-mb
	sx := (xmax - xmin) / aw
	sy := (ymax - ymin) / ah
	s := math.Max(sx, sy)
	if s == 0 {
		s = 1
	}
	cx, cy := (xmin+xmax)/2, (ymin+ymax)/2
	midX := pad + ml + aw/2
	midY := h / 2
	if mt != 0 || mb != 0 {
		midY = pad + mt + ah/2
	}
	// A point outside the view is drawn at its edge.
	left, right := midX-(cx-xmin)/s, midX+(xmax-cx)/s
	top, bottom := midY-(ymax-cy)/s, midY+(cy-ymin)/s
	px := func(x float64) float64 { return math.Min(math.Max(midX+(x-cx)/s, left), right) }
	py := func(y float64) float64 { return math.Min(math.Max(midY-(y-cy)/s, top), bottom) }
	scatterFrame(&b, w, h, ml, mr, mb, opt, outside)
	b.WriteString(`<g class="pan">`)
	for _, p := range points {
		if !p.Spread || !view(p.X, p.Y) {
			continue
		}
		rx, ry, deg := ellipse(p.Cov, SpreadScale)
		// The SVG's y axis points down: the angle flips.
		fmt.Fprintf(&b, `<ellipse class="spread" cx="%.1f" cy="%.1f" rx="%.1f" ry="%.1f" transform="rotate(%.1f %.1f %.1f)" fill="%s" fill-opacity="0.15" stroke="%s" stroke-opacity="0.5"/>`,
			px(p.X), py(p.Y), math.Max(rx/s, 0.5), math.Max(ry/s, 0.5), -deg, px(p.X), py(p.Y), clusterColor(p.Cluster), clusterColor(p.Cluster))
	}
	for _, p := range points {
		x, y := px(p.X), py(p.Y)
		title := html.EscapeString(p.Label)
		col := clusterColor(p.Cluster)
		if !view(p.X, p.Y) {
			fmt.Fprintf(&b, `<g class="pt outside"><title>%s: outside the view, at (%s, %s)</title><circle cx="%.1f" cy="%.1f" r="%.1f" fill="none" stroke="%s" stroke-width="2"/></g>`,
				title, Tick(p.X), Tick(p.Y), x, y, math.Max(size/4, 4), col)
			continue
		}
		if hasImg && p.Image != "" {
			fmt.Fprintf(&b, `<g class="pt"><title>%s</title><image href="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" preserveAspectRatio="xMidYMid slice"/><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="%s" stroke-width="2"/></g>`,
				title, html.EscapeString(p.Image), x-size/2, y-size/2, size, size, x-size/2, y-size/2, size, size, col)
		} else {
			fmt.Fprintf(&b, `<g class="pt"><title>%s</title><circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" fill-opacity="0.85"/>`, title, x, y, size/2, col)
			if showText {
				fmt.Fprintf(&b, `<text class="ptlabel" x="%.1f" y="%.1f">%s</text>`, x+size/2+2, y+4, title)
			}
			b.WriteString(`</g>`)
		}
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}

// scatterFrame writes a scatter plot's axis labels, legend and the note of
// the points outside the view: outside the pan group, so that they stay
// put while the plot zooms.
func scatterFrame(b *strings.Builder, w, h, ml, mr, mb float64, opt ScatterOptions, outside int) {
	if opt.XLabel != "" {
		fmt.Fprintf(b, `<text class="label" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, ml+(w-ml-mr)/2, h-6, html.EscapeString(opt.XLabel))
	}
	if opt.YLabel != "" {
		fmt.Fprintf(b, `<text class="label" transform="translate(12 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (h-mb)/2, html.EscapeString(opt.YLabel))
	}
	if mb > 0 || ml > 0 {
		fmt.Fprintf(b, `<path class="axis" d="M%.1f %.1fV%.1fH%.1f"/>`, ml+2, 4.0, h-mb, w-mr-4)
	}
	for i, e := range opt.Legend {
		x, y := w-mr+12, 18+18*float64(i)
		col := html.EscapeString(e.Color)
		switch e.Kind {
		case "frame":
			fmt.Fprintf(b, `<rect class="swatch" x="%.1f" y="%.1f" width="12" height="12" fill="none" stroke="%s" stroke-width="2"/>`, x, y-9, col)
		case "ellipse":
			// An ellipse drawn as two arcs: the plot's <ellipse> elements
			// are the items' own.
			fmt.Fprintf(b, `<path class="swatch ellipse" d="M%.1f %.1fa8 5 0 1 0 16 0a8 5 0 1 0 -16 0" fill="%s" fill-opacity="0.15" stroke="%s" stroke-opacity="0.5"/>`, x-2, y-3, col, col)
		default:
			fmt.Fprintf(b, `<circle class="swatch" cx="%.1f" cy="%.1f" r="5" fill="%s"/>`, x+6, y-3, col)
		}
		fmt.Fprintf(b, `<text class="legend" x="%.1f" y="%.1f">%s</text>`, x+20, y+1, html.EscapeString(e.Text))
	}
	if outside > 0 {
		what := "items lie"
		if outside == 1 {
			what = "item lies"
		}
		fmt.Fprintf(b, `<text class="note outside-note" x="%.1f" y="%.1f">%d %s outside the view (beyond the 1st–99th percentile), drawn as rings at its edge</text>`,
			ml+6, 14.0, outside, what)
	}
}

// ClusterLegend is a legend of k clusters' colours (for k ≤ 8, else a
// line saying the colours are clusters), kind "dot" or "frame".
func ClusterLegend(k int, kind string) []LegendEntry {
	if k <= 0 {
		return nil
	}
	if k > 8 {
		return []LegendEntry{{Color: clusterColor(0), Text: fmt.Sprintf("colour: cluster (%d)", k), Kind: kind}}
	}
	out := make([]LegendEntry, k)
	for c := range k {
		out[c] = LegendEntry{Color: clusterColor(c), Text: fmt.Sprintf("cluster %d", c+1), Kind: kind}
	}
	return out
}
