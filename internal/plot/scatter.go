package plot

import (
	"fmt"
	"html"
	"math"
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
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range points {
		// An ellipse's extent along the axes is k·√xx and k·√yy.
		ex, ey := 0.0, 0.0
		if p.Spread {
			ex, ey = SpreadScale*math.Sqrt(math.Max(p.Cov[0], 0)), SpreadScale*math.Sqrt(math.Max(p.Cov[2], 0))
		}
		xmin, xmax = math.Min(xmin, p.X-ex), math.Max(xmax, p.X+ex)
		ymin, ymax = math.Min(ymin, p.Y-ey), math.Max(ymax, p.Y+ey)
	}
	// Equal aspect: the larger span decides the scale.
	sx := (xmax - xmin) / (w - pad - padRight)
	sy := (ymax - ymin) / (h - 2*pad)
	s := math.Max(sx, sy)
	if s == 0 {
		s = 1
	}
	cx, cy := (xmin+xmax)/2, (ymin+ymax)/2
	midX := pad + (w-pad-padRight)/2
	px := func(x float64) float64 { return midX + (x-cx)/s }
	py := func(y float64) float64 { return h/2 - (y-cy)/s }
	b.WriteString(`<g class="pan">`)
	for _, p := range points {
		if !p.Spread {
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
