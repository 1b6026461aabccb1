package plot

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Merge is a merge of a dendrogram (see kernel.Merge): nodes A and B, the
// leaves 0..n-1 and merge t's node n+t, join at Height.
type Merge struct {
	A, B   int
	Height float64
}

// Dendrogram draws the dendrogram of n items in an SVG of w×h: leaves in
// the tree's order along x (in their cluster's colour, clusters[i] for
// item i, grey without one; with their labels when few), merge heights
// along y, and, when any leaf has a cluster, a legend of the leaves'
// colours in a margin on the right (dendrogramLegend).
func Dendrogram(n int, merges []Merge, labels []string, clusters []int, w, h float64, label string) string {
	var b strings.Builder
	svgOpen(&b, w, h, "dendrogram", label)
	if n < 2 || len(merges) != n-1 {
		return empty(&b, "no data yet")
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
	legend := dendrogramLegend(n, clusters)
	mr := 16.0
	if len(legend) > 0 {
		mr = legendWidth
	}
	f := frame{w: w, h: h, ml: 48, mr: mr, mt: 10, mb: mb, xmin: 0, xmax: float64(n - 1), ymin: 0, ymax: top}
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
	f.axes(&b, nil, Ticks(nil, 0, top, 4), Tick, "", "height")
	var d strings.Builder
	for _, m := range merges {
		y := f.sy(m.Height)
		fmt.Fprintf(&d, "M%.1f %.1fV%.1fH%.1fV%.1f", f.sx(pos[m.A]), f.sy(height[m.A]), y, f.sx(pos[m.B]), f.sy(height[m.B]))
	}
	fmt.Fprintf(&b, `<path class="tree" d="%s"/>`, d.String())
	for _, v := range order {
		x := f.sx(pos[v])
		c := -1
		if v < len(clusters) {
			c = clusters[v]
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="6" fill="%s"><title>%s</title></rect>`,
			x-math.Max(1, (w-mr-40)/float64(n)/2), f.sy(0)+1, math.Max(2, (w-mr-40)/float64(n)), clusterColor(c), html.EscapeString(labels[v]))
		if showLabels {
			fmt.Fprintf(&b, `<text class="leaf" transform="translate(%.1f %.1f) rotate(60)">%s</text>`, x-2, f.sy(0)+12, html.EscapeString(labels[v]))
		}
	}
	if len(legend) > 0 {
		lx := w - legendWidth + 16
		fmt.Fprintf(&b, `<text class="legend legend-title" x="%.1f" y="%.1f">leaf colour:</text>`, lx, f.mt+8)
		for i, e := range legend {
			ly := f.mt + 26 + 18*float64(i)
			fmt.Fprintf(&b, `<rect class="swatch" x="%.1f" y="%.1f" width="14" height="8" fill="%s"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
				lx, ly-4, html.EscapeString(e.Color), lx+20, ly+4, html.EscapeString(e.Text))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// dendrogramLegend says what the leaves' colours mean: the clusters the
// leaves have (ClusterLegend: one line each for up to 8, else one line),
// and grey for leaves without a cluster when there are any. Nil when no
// leaf has a cluster: every leaf is grey and there is nothing to tell
// apart.
func dendrogramLegend(n int, clusters []int) []LegendEntry {
	k, none := 0, false
	for v := range n {
		if v < len(clusters) && clusters[v] >= 0 {
			k = max(k, clusters[v]+1)
		} else {
			none = true
		}
	}
	if k == 0 {
		return nil
	}
	out := ClusterLegend(k, "dot")
	if none {
		out = append(out, LegendEntry{Color: clusterColor(-1), Text: "no cluster"})
	}
	return out
}
