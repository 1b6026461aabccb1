// Package plot draws the dashboard's charts as SVG on the server, so a page
// is complete without JavaScript (static/dashboard.js only adds zoom and
// pan): scatter plots, lines, bars, a heat map and a dendrogram. It takes
// plain numbers and labels and returns the markup as a string, every label
// escaped; it knows nothing of studies, the store or HTTP.
package plot

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// palette colours clusters (Okabe–Ito, colour-blind safe, then greys).
var palette = [...]string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999", "#7F3C8D"}

// clusterColor is cluster c's colour, grey for no cluster (c < 0).
func clusterColor(c int) string {
	if c < 0 {
		return "#888"
	}
	return palette[c%len(palette)]
}

// frame maps data coordinates into an SVG of w×h with margins.
type frame struct {
	w, h                   float64
	ml, mr, mt, mb         float64
	xmin, xmax, ymin, ymax float64
}

func (f frame) sx(x float64) float64 {
	if f.xmax == f.xmin {
		return f.ml + (f.w-f.ml-f.mr)/2
	}
	return f.ml + (x-f.xmin)/(f.xmax-f.xmin)*(f.w-f.ml-f.mr)
}

func (f frame) sy(y float64) float64 {
	if f.ymax == f.ymin {
		return f.mt + (f.h-f.mt-f.mb)/2
	}
	return f.h - f.mb - (y-f.ymin)/(f.ymax-f.ymin)*(f.h-f.mt-f.mb)
}

func svgOpen(b *strings.Builder, w, h float64, class, label string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot %s" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		class, w, h, w, h, html.EscapeString(label))
}

// NiceStep rounds x up to 1, 2 or 5 times a power of ten: bin widths and
// axis ticks a reader takes in at a glance.
func NiceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// Ticks appends to dst about count round tick values covering [lo, hi]
// (multiples of a NiceStep) and returns it; lo alone when the range is
// empty.
func Ticks(dst []float64, lo, hi float64, count int) []float64 {
	if !(hi > lo) {
		return append(dst, lo)
	}
	step := NiceStep((hi - lo) / float64(max(count, 1)))
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		dst = append(dst, math.Round(v/step)*step)
	}
	return dst
}

// Tick writes an axis value in few characters: thousands as "k" from
// 10,000, two decimals at most from 1 and three below, trailing zeros
// dropped.
func Tick(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 10000:
		return strconv.FormatFloat(v/1000, 'g', 4, 64) + "k"
	case a >= 1:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	}
}

// axes draws the frame's axes with ticks and labels.
func (f frame) axes(b *strings.Builder, xticks, yticks []float64, xfmt func(float64) string, xlabel, ylabel string) {
	x0, x1, y0, y1 := f.ml, f.w-f.mr, f.h-f.mb, f.mt
	fmt.Fprintf(b, `<path class="axis" d="M%.1f %.1fV%.1fH%.1f"/>`, x0, y1, y0, x1)
	for _, t := range yticks {
		y := f.sy(t)
		fmt.Fprintf(b, `<path class="grid" d="M%.1f %.1fH%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			x0, y, x1, x0-4, y+4, Tick(t))
	}
	for _, t := range xticks {
		x := f.sx(t)
		fmt.Fprintf(b, `<path class="axis" d="M%.1f %.1fv4"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x, y0, x, y0+16, html.EscapeString(xfmt(t)))
	}
	if xlabel != "" {
		fmt.Fprintf(b, `<text class="label" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, (x0+x1)/2, f.h-4, html.EscapeString(xlabel))
	}
	if ylabel != "" {
		fmt.Fprintf(b, `<text class="label" transform="translate(12 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (y0+y1)/2, html.EscapeString(ylabel))
	}
}

// empty closes b's SVG with a message in its middle, for a plot without
// data.
func empty(b *strings.Builder, msg string) string {
	fmt.Fprintf(b, `<text class="empty" x="50%%" y="50%%" text-anchor="middle">%s</text></svg>`, msg)
	return b.String()
}
