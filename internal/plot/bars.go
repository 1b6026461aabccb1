package plot

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// Bars draws counts as bars in an SVG of w×h; bar i spans [x0 + i·step,
// x0 + (i+1)·step), its ends written by xfmt on the x axis and in its
// title.
func Bars(counts []int, x0, step float64, xfmt func(float64) string, w, h float64, xlabel, ylabel, label string) string {
	var b strings.Builder
	svgOpen(&b, w, h, "bars", label)
	total := 0
	top := 0
	for _, c := range counts {
		total += c
		top = max(top, c)
	}
	if total == 0 {
		return empty(&b, "no data yet")
	}
	f := frame{w: w, h: h, ml: 48, mr: 12, mt: 12, mb: 36, xmin: x0, xmax: x0 + step*float64(len(counts)), ymin: 0, ymax: float64(top) * 1.05}
	f.axes(&b, Ticks(nil, f.xmin, f.xmax, 5), Ticks(nil, 0, f.ymax, 4), xfmt, xlabel, ylabel)
	bw := f.sx(x0+step) - f.sx(x0)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		x := f.sx(x0 + step*float64(i))
		y := f.sy(float64(c))
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s–%s: %d</title></rect>`,
			x+0.5, y, math.Max(bw-1, 0.5), f.sy(0)-y, html.EscapeString(xfmt(x0+step*float64(i))), html.EscapeString(xfmt(x0+step*float64(i+1))), c)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// TimeFormat formats Unix seconds, in UTC, for an axis spanning span: to
// the second under ten minutes, by month over half a year.
func TimeFormat(span time.Duration) func(float64) string {
	layout := "15:04"
	switch {
	case span < 10*time.Minute:
		layout = "15:04:05"
	case span > 180*24*time.Hour:
		layout = "2006-01"
	case span > 3*24*time.Hour:
		layout = "Jan 2"
	case span > 24*time.Hour:
		layout = "Jan 2 15h"
	}
	return func(v float64) string { return time.Unix(int64(v), 0).UTC().Format(layout) }
}
