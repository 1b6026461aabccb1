package plot

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// ErrorPoint is a value with a symmetric error bar (Err ≥ 0; NaN: none).
type ErrorPoint struct {
	X, Y, Err float64
}

// ErrorBars draws points joined by a line with their error bars on axes
// from 0 in an SVG of w×h, the point at x = mark ringed and labelled
// markLabel (no mark when no point has that x): the dashboard's held-out
// error against the dimension with its standard error.
func ErrorBars(pts []ErrorPoint, mark float64, markLabel string, w, h float64, xlabel, ylabel, label string) string {
	var b strings.Builder
	svgOpen(&b, w, h, "line errorbars", label)
	if len(pts) == 0 {
		return empty(&b, "no data yet")
	}
	f := frame{w: w, h: h, ml: 48, mr: 12, mt: 20, mb: 36,
		xmin: math.Inf(1), xmax: math.Inf(-1), ymin: 0, ymax: math.Inf(-1)}
	bar := func(p ErrorPoint) float64 {
		if math.IsNaN(p.Err) || p.Err < 0 {
			return 0
		}
		return p.Err
	}
	for _, p := range pts {
		f.xmin, f.xmax = math.Min(f.xmin, p.X), math.Max(f.xmax, p.X)
		f.ymax = math.Max(f.ymax, p.Y+bar(p))
		f.ymin = math.Min(f.ymin, p.Y-bar(p))
	}
	f.xmin, f.xmax = f.xmin-0.5, f.xmax+0.5 // half a step either side: the bars clear the axes
	if !(f.ymax > f.ymin) {
		f.ymax = f.ymin + 1
	}
	f.ymax *= 1.1
	var xt []float64
	for _, p := range pts {
		xt = append(xt, p.X)
	}
	f.axes(&b, xt, Ticks(nil, f.ymin, f.ymax, 4), Tick, xlabel, ylabel)
	var d strings.Builder
	for i, p := range pts {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f", cmd, f.sx(p.X), f.sy(p.Y))
	}
	fmt.Fprintf(&b, `<path class="series s1" d="%s"/>`, d.String())
	for _, p := range pts {
		x, e := f.sx(p.X), bar(p)
		if e > 0 {
			lo, hi := f.sy(p.Y-e), f.sy(p.Y+e)
			fmt.Fprintf(&b, `<path class="errbar" d="M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8" stroke="currentColor"/>`, x, lo, hi, x-4, lo, x-4, hi)
		}
		fmt.Fprintf(&b, `<circle class="marker s1" cx="%.1f" cy="%.1f" r="3"><title>%s %s: %s ± %s</title></circle>`,
			x, f.sy(p.Y), html.EscapeString(xlabel), Tick(p.X), Tick(p.Y), Tick(e))
		if p.X == mark {
			fmt.Fprintf(&b, `<circle class="mark" cx="%.1f" cy="%.1f" r="8" fill="none" stroke="#D55E00" stroke-width="2"/><text class="legend" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
				x, f.sy(p.Y), x, f.sy(p.Y+e)-8, html.EscapeString(markLabel))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}
