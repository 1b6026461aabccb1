package plot

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// Series is a polyline with markers; a NaN Y leaves its point out.
type Series struct {
	X, Y   []float64
	Class  string // the CSS class of the line and its markers
	Legend string // "" for none
	// Low and High, when set (as long as Y), are a confidence band drawn
	// under the line (a shaded polygon of class "band"); a NaN end leaves
	// its point out of the band.
	Low, High []float64
	// NoMarkers draws the line alone (a fitted curve).
	NoMarkers bool
}

// hasBand reports whether s has a band to draw.
func (s Series) hasBand() bool {
	return len(s.Low) == len(s.Y) && len(s.High) == len(s.Y) && len(s.Y) > 0
}

// band writes s's band as a closed path: along High, back along Low.
func (s Series) band(b *strings.Builder, f frame) {
	var up, down []string
	for k := range s.X {
		if math.IsNaN(s.Y[k]) || math.IsNaN(s.Low[k]) || math.IsNaN(s.High[k]) {
			continue
		}
		up = append(up, fmt.Sprintf("%.1f %.1f", f.sx(s.X[k]), f.sy(s.High[k])))
		down = append(down, fmt.Sprintf("%.1f %.1f", f.sx(s.X[k]), f.sy(s.Low[k])))
	}
	if len(up) == 0 {
		return
	}
	slices.Reverse(down)
	fmt.Fprintf(b, `<path class="band %s" d="M%sL%sZ"><title>%s: interval</title></path>`,
		s.Class, strings.Join(up, "L"), strings.Join(down, "L"), html.EscapeString(s.Legend))
}

// Lines draws series on shared axes in an SVG of w×h, the legend in the
// plot's top right corner; fromZero starts both axes at 0 at most.
func Lines(series []Series, w, h float64, xlabel, ylabel string, fromZero bool, label string) string {
	return lines(series, w, h, xlabel, ylabel, fromZero, false, label)
}

// Curves draws series on shared axes from 0 with the legend in a margin on
// the right, clear of the lines (for up to eight series: the arms'
// learning curves).
func Curves(series []Series, w, h float64, xlabel, ylabel string, label string) string {
	return lines(series, w, h, xlabel, ylabel, true, true, label)
}

// legendWidth is the right margin Curves keeps for its legend.
const legendWidth = 150

func lines(ss []Series, w, h float64, xlabel, ylabel string, fromZero, legendRight bool, label string) string {
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
			if s.hasBand() && !math.IsNaN(s.Low[i]) && !math.IsNaN(s.High[i]) {
				f.ymin, f.ymax = math.Min(f.ymin, s.Low[i]), math.Max(f.ymax, s.High[i])
			}
		}
	}
	if pts == 0 {
		return empty(&b, "no data yet")
	}
	if fromZero {
		f.ymin = math.Min(0, f.ymin)
		f.xmin = math.Min(0, f.xmin)
	}
	if f.ymax == f.ymin {
		f.ymax = f.ymin + 1
	}
	// 5% headroom above the highest point; upwards for a negative top too.
	f.ymax = math.Max(1.05*f.ymax, 0.95*f.ymax)
	if f.xmax == f.xmin {
		f.xmin, f.xmax = f.xmin-1, f.xmax+1
	}
	f.axes(&b, Ticks(nil, f.xmin, f.xmax, 5), Ticks(nil, f.ymin, f.ymax, 4), Tick, xlabel, ylabel)
	for _, s := range ss {
		if s.hasBand() {
			s.band(&b, f)
		}
	}
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
			if !math.IsNaN(s.Y[k]) && !s.NoMarkers {
				fmt.Fprintf(&b, `<circle class="marker %s" cx="%.1f" cy="%.1f" r="3"><title>%s: %s at %s</title></circle>`,
					s.Class, f.sx(s.X[k]), f.sy(s.Y[k]), html.EscapeString(s.Legend), Tick(s.Y[k]), Tick(s.X[k]))
			}
		}
		switch {
		case s.Legend == "":
		case legendRight:
			lx, ly := w-legendWidth+16, f.mt+8+18*float64(i)
			fmt.Fprintf(&b, `<path class="series %s" d="M%.1f %.1fh18"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
				s.Class, lx, ly, lx+22, ly+4, html.EscapeString(s.Legend))
		default:
			// In the top right corner, the text ending before its swatch
			// at the plot's edge: a long legend grows leftwards instead
			// of running out of the picture.
			lx, ly := w-f.mr-22, f.mt+8+16*float64(i)
			fmt.Fprintf(&b, `<path class="series %s" d="M%.1f %.1fh18"/><text class="legend" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
				s.Class, lx, ly, lx-4, ly+4, html.EscapeString(s.Legend))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}
