package web

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/dashboard"
)

// The dashboard's plots are SVG written here on the server, so the page is
// complete without JavaScript; static/dashboard.js only adds zoom and pan.

// palette colours clusters (Okabe–Ito, colour-blind safe, then greys).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999", "#7F3C8D"}

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

// niceTicks returns about count round tick values covering [lo, hi].
func niceTicks(lo, hi float64, count int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	step := dashboard.NiceStep((hi - lo) / float64(max(count, 1)))
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

func fmtTick(v float64) string {
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
			x0, y, x1, x0-4, y+4, fmtTick(t))
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

// scatterItem is one item of a scatter plot.
type scatterItem struct {
	X, Y    float64
	Label   string
	Image   string // thumbnail URL, or "" to draw a dot
	Cluster int
}

// scatterSVG draws items at their coordinates with equal aspect ratio:
// thumbnails framed in their cluster's colour (or dots), the label on hover
// (an SVG title) and, for few items, written next to the dot. zoomable
// marks it for dashboard.js's zoom and pan.
func scatterSVG(items []scatterItem, w, h float64, zoomable bool, label string) string {
	var b strings.Builder
	class := "scatter"
	if zoomable {
		class += " zoomable"
	}
	svgOpen(&b, w, h, class, label)
	if len(items) == 0 {
		b.WriteString(`<text class="empty" x="50%" y="50%" text-anchor="middle">no data</text></svg>`)
		return b.String()
	}
	n := float64(len(items))
	size := math.Max(12, math.Min(48, 0.35*math.Sqrt(w*h/n)))
	hasImg := items[0].Image != ""
	if !hasImg {
		size = 8
	}
	showText := !hasImg && len(items) <= 30
	pad := size/2 + 4
	padRight := pad
	if showText {
		longest := 0
		for _, it := range items {
			longest = max(longest, len([]rune(it.Label)))
		}
		padRight += 6 * float64(min(longest, 24)) // about 6 px per character at 10 px
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, it := range items {
		xmin, xmax = math.Min(xmin, it.X), math.Max(xmax, it.X)
		ymin, ymax = math.Min(ymin, it.Y), math.Max(ymax, it.Y)
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
	for _, it := range items {
		x, y := px(it.X), py(it.Y)
		title := html.EscapeString(it.Label)
		col := clusterColor(it.Cluster)
		if hasImg && it.Image != "" {
			fmt.Fprintf(&b, `<g class="pt"><title>%s</title><image href="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" preserveAspectRatio="xMidYMid slice"/><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="%s" stroke-width="2"/></g>`,
				title, html.EscapeString(it.Image), x-size/2, y-size/2, size, size, x-size/2, y-size/2, size, size, col)
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

// series is a polyline with markers.
type series struct {
	X, Y   []float64
	Class  string
	Legend string
}

// lineSVG draws series on shared axes, the legend in the plot's top
// right corner.
func lineSVG(ss []series, w, h float64, xlabel, ylabel string, ymin0 bool, label string) string { //nolint:unparam // the width is the caller's layout choice
	return linesSVG(ss, w, h, xlabel, ylabel, ymin0, false, label)
}

// curvesSVG draws series on shared axes from 0 with the legend in a
// margin on the right, clear of the lines (for up to eight series: the
// arms' learning curves).
func curvesSVG(ss []series, w, h float64, xlabel, ylabel string, label string) string {
	return linesSVG(ss, w, h, xlabel, ylabel, true, true, label)
}

// legendWidth is the right margin curvesSVG keeps for its legend.
const legendWidth = 150

func linesSVG(ss []series, w, h float64, xlabel, ylabel string, ymin0, legendRight bool, label string) string {
	var b strings.Builder
	svgOpen(&b, w, h, "line", label)
	f := frame{w: w, h: h, ml: 48, mr: 12, mt: 12, mb: 36,
		xmin: math.Inf(1), xmax: math.Inf(-1), ymin: math.Inf(1), ymax: math.Inf(-1)}
	if legendRight {
		f.mr = legendWidth
	}
	pts := 0
	for _, s := range ss {
		for i := range s.X {
			if math.IsNaN(s.Y[i]) {
				continue
			}
			pts++
			f.xmin, f.xmax = math.Min(f.xmin, s.X[i]), math.Max(f.xmax, s.X[i])
			f.ymin, f.ymax = math.Min(f.ymin, s.Y[i]), math.Max(f.ymax, s.Y[i])
		}
	}
	if pts == 0 {
		b.WriteString(`<text class="empty" x="50%" y="50%" text-anchor="middle">no data yet</text></svg>`)
		return b.String()
	}
	if ymin0 {
		f.ymin = math.Min(0, f.ymin)
		f.xmin = math.Min(0, f.xmin)
	}
	if f.ymax == f.ymin {
		f.ymax = f.ymin + 1
	}
	f.ymax *= 1.05
	if f.xmax == f.xmin {
		f.xmin, f.xmax = f.xmin-1, f.xmax+1
	}
	f.axes(&b, niceTicks(f.xmin, f.xmax, 5), niceTicks(f.ymin, f.ymax, 4), fmtTick, xlabel, ylabel)
	for i, s := range ss {
		var d strings.Builder
		for k := range s.X {
			if math.IsNaN(s.Y[k]) {
				continue
			}
			cmd := "L"
			if d.Len() == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, f.sx(s.X[k]), f.sy(s.Y[k]))
		}
		fmt.Fprintf(&b, `<path class="series %s" d="%s"/>`, s.Class, d.String())
		for k := range s.X {
			if !math.IsNaN(s.Y[k]) {
				fmt.Fprintf(&b, `<circle class="marker %s" cx="%.1f" cy="%.1f" r="3"><title>%s: %s at %s</title></circle>`,
					s.Class, f.sx(s.X[k]), f.sy(s.Y[k]), html.EscapeString(s.Legend), fmtTick(s.Y[k]), fmtTick(s.X[k]))
			}
		}
		if s.Legend != "" {
			lx, ly := w-150, 18+14*float64(i)
			if legendRight {
				lx, ly = w-legendWidth+16, f.mt+8+18*float64(i)
			}
			fmt.Fprintf(&b, `<path class="series %s" d="M%.1f %.1fh18"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
				s.Class, lx, ly, lx+22, ly+4, html.EscapeString(s.Legend))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// barsSVG draws counts as bars; bar i spans [x0 + i·step, x0 + (i+1)·step).
func barsSVG(counts []int, x0, step float64, xfmt func(float64) string, w, h float64, xlabel, ylabel, label string) string { //nolint:unparam // the width is the caller's layout choice
	var b strings.Builder
	svgOpen(&b, w, h, "bars", label)
	total := 0
	top := 0
	for _, c := range counts {
		total += c
		top = max(top, c)
	}
	if total == 0 {
		b.WriteString(`<text class="empty" x="50%" y="50%" text-anchor="middle">no data yet</text></svg>`)
		return b.String()
	}
	f := frame{w: w, h: h, ml: 48, mr: 12, mt: 12, mb: 36, xmin: x0, xmax: x0 + step*float64(len(counts)), ymin: 0, ymax: float64(top) * 1.05}
	f.axes(&b, niceTicks(f.xmin, f.xmax, 5), niceTicks(0, f.ymax, 4), xfmt, xlabel, ylabel)
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

// timeFmt formats Unix seconds for an axis spanning span.
func timeFmt(span time.Duration) func(float64) string {
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

// heatmapSVG draws the matrix m as an image (one pixel per cell, scaled
// without smoothing) with lines between clusters: cuts are where the
// cluster changes, as fractions of the side.
func heatmapSVG(m [][]float64, cuts []float64, side float64, label string) string {
	var b strings.Builder
	svgOpen(&b, side+70, side+20, "heatmap", label)
	k := len(m)
	if k == 0 {
		b.WriteString(`<text class="empty" x="50%" y="50%" text-anchor="middle">no data yet</text></svg>`)
		return b.String()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range m {
		for _, v := range row {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, k, k))
	for i, row := range m {
		for j, v := range row {
			img.Set(j, i, ramp((v-lo)/math.Max(hi-lo, 1e-12)))
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	fmt.Fprintf(&b, `<image x="10" y="10" width="%g" height="%g" preserveAspectRatio="none" style="image-rendering:pixelated" href="data:image/png;base64,%s"/>`,
		side, side, base64.StdEncoding.EncodeToString(buf.Bytes()))
	for _, c := range cuts {
		p := 10 + side*c
		fmt.Fprintf(&b, `<path class="cut" d="M10 %.1fH%.1fM%.1f 10V%.1f"/>`, p, 10+side, p, 10+side)
	}
	// Colour scale.
	for i := range 20 {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="10" height="%.1f" fill="%s"/>`, side+20, 10+side-float64(i+1)*side/20, side/20+0.5, hexColor(ramp(float64(i)/19)))
	}
	fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="16">%s</text><text class="tick" x="%.1f" y="%.1f">%s</text>`,
		side+33, fmtTick(hi), side+33, side+10, fmtTick(lo))
	b.WriteString(`</svg>`)
	return b.String()
}

// ramp is a perceptually ordered colour map from dark blue through teal to yellow (viridis stops).
func ramp(t float64) color.RGBA {
	stops := [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}
	t = math.Max(0, math.Min(1, t))
	p := t * float64(len(stops)-1)
	i := min(int(p), len(stops)-2)
	f := p - float64(i)
	var c [3]uint8
	for k := range c {
		c[k] = uint8(stops[i][k] + f*(stops[i+1][k]-stops[i][k]))
	}
	return color.RGBA{c[0], c[1], c[2], 255}
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// dendroMerge is a merge of the dendrogram (see kernel.Merge).
type dendroMerge struct {
	A, B   int
	Height float64
}

// dendrogramSVG draws a complete-linkage dendrogram of n items: leaves in
// the tree's order along x (with their cluster's colour, and labels when
// few), merge heights along y.
func dendrogramSVG(n int, merges []dendroMerge, labels []string, clusters []int, w, h float64, label string) string { //nolint:unparam // the width is the caller's layout choice
	var b strings.Builder
	svgOpen(&b, w, h, "dendrogram", label)
	if n < 2 || len(merges) != n-1 {
		b.WriteString(`<text class="empty" x="50%" y="50%" text-anchor="middle">no data yet</text></svg>`)
		return b.String()
	}
	showLabels := n <= 60
	mb := 14.0
	if showLabels {
		mb = 70
	}
	top := 0.0
	for _, m := range merges {
		top = math.Max(top, m.Height)
	}
	f := frame{w: w, h: h, ml: 48, mr: 16, mt: 10, mb: mb, xmin: 0, xmax: float64(n - 1), ymin: 0, ymax: top}
	// Leaf order: depth-first from the root, iteratively.
	pos := make([]float64, 2*n-1)
	height := make([]float64, 2*n-1)
	order := make([]int, 0, n)
	stack := []int{2*n - 2}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v < n {
			pos[v] = float64(len(order))
			order = append(order, v)
			continue
		}
		m := merges[v-n]
		stack = append(stack, m.B, m.A)
	}
	for t, m := range merges {
		pos[n+t] = (pos[m.A] + pos[m.B]) / 2
		height[n+t] = m.Height
	}
	f.axes(&b, nil, niceTicks(0, top, 4), fmtTick, "", "height")
	var d strings.Builder
	for t, m := range merges {
		y := f.sy(m.Height)
		fmt.Fprintf(&d, "M%.1f %.1fV%.1fH%.1fV%.1f", f.sx(pos[m.A]), f.sy(height[m.A]), y, f.sx(pos[m.B]), f.sy(height[m.B]))
		_ = t
	}
	fmt.Fprintf(&b, `<path class="tree" d="%s"/>`, d.String())
	for _, v := range order {
		x := f.sx(pos[v])
		c := -1
		if v < len(clusters) {
			c = clusters[v]
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="6" fill="%s"><title>%s</title></rect>`,
			x-math.Max(1, (w-56)/float64(n)/2), f.sy(0)+1, math.Max(2, (w-56)/float64(n)), clusterColor(c), html.EscapeString(labels[v]))
		if showLabels {
			fmt.Fprintf(&b, `<text class="leaf" transform="translate(%.1f %.1f) rotate(60)">%s</text>`, x-2, f.sy(0)+12, html.EscapeString(labels[v]))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}
