package plot_test

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/plot"
)

func TestNiceStep(t *testing.T) {
	t.Parallel()
	// Expected by hand: the smallest of 1, 2, 5 and 10 times the power of
	// ten at or below x that is at least x.
	for _, c := range []struct{ x, want float64 }{
		{0.03, 0.05}, {0.2, 0.2}, {1, 1}, {1.5, 2}, {2, 2}, {2.01, 5}, {5, 5}, {7, 10},
		{10, 10}, {98, 100}, {250, 500}, {1001.25, 2000}, {86400000.0 / 7, 2e7},
	} {
		if got := plot.NiceStep(c.x); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("NiceStep(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestTicks(t *testing.T) {
	t.Parallel()
	// Expected by hand: the multiples of NiceStep((hi - lo) / count) in
	// [lo, hi], appended after what dst holds.
	for _, c := range []struct {
		dst       []float64
		lo, hi    float64
		count     int
		want      []float64
		rationale string
	}{
		{nil, 0, 1, 4, []float64{0, 0.5, 1}, "step NiceStep(0.25) = 0.5"},
		{nil, 0, 5.25, 4, []float64{0, 2, 4}, "step NiceStep(1.3125) = 2"},
		{nil, -0.3, 0.7, 5, []float64{-0.2, 0, 0.2, 0.4, 0.6}, "step 0.2 from the first multiple above -0.3"},
		{nil, 3, 3, 4, []float64{3}, "no range: lo alone"},
		{[]float64{9}, 0, 10, 1, []float64{9, 0, 10}, "appended to dst"},
	} {
		got := plot.Ticks(c.dst, c.lo, c.hi, c.count)
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = math.Abs(got[i]-c.want[i]) < 1e-12
		}
		if !ok {
			t.Errorf("Ticks(%v, %v, %v, %d) = %v, want %v (%s)", c.dst, c.lo, c.hi, c.count, got, c.want, c.rationale)
		}
	}
}

func TestTick(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.25, "0.25"}, {0.1234, "0.123"}, {0.0004, "0"}, {-0.5, "-0.5"},
		{1, "1"}, {2.5, "2.5"}, {3.14159, "3.14"}, {9999, "9999"},
		{10000, "10k"}, {12345, "12.35k"}, {-25000, "-25k"}, {1.5e6, "1500k"},
	} {
		if got := plot.Tick(c.v); got != c.want {
			t.Errorf("Tick(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestMarksInsideViewBox draws seeded random data of every size from one
// point to many, of spans from none to huge, and checks that every mark
// (a dot, a marker, a thumbnail, a bar, a leaf's swatch centre) lies
// inside the drawing's viewBox: what a reader can see.
func TestMarksInsideViewBox(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 25))
	for trial := range 60 {
		n := 1 + rng.IntN(80)
		scale := math.Pow(10, float64(rng.IntN(9)-4))
		offset := (rng.Float64() - 0.5) * 100 * scale
		if trial%10 == 0 {
			scale = 0 // every value equal
		}
		value := func() float64 { return offset + scale*rng.NormFloat64() }
		points := make([]plot.Point, n)
		xs, ys := make([]float64, n), make([]float64, n)
		counts := make([]int, n)
		for i := range n {
			points[i] = plot.Point{X: value(), Y: value(), Label: fmt.Sprint(i), Cluster: i % 5}
			if trial%2 == 1 {
				points[i].Image = "/img/" + strconv.Itoa(i)
			}
			xs[i], ys[i] = float64(i)*scale+offset, value()
			counts[i] = rng.IntN(50)
		}
		merges := make([]plot.Merge, 0, n)
		if n > 1 {
			merges = append(merges, plot.Merge{A: 0, B: 1, Height: scale})
			for i := 2; i < n; i++ {
				merges = append(merges, plot.Merge{A: n + i - 2, B: i, Height: scale * float64(i)})
			}
		}
		labels := make([]string, n)
		for i := range labels {
			labels[i] = strconv.Itoa(i)
		}
		for name, svg := range map[string]string{
			"scatter":    plot.Scatter(points, 430, 340, true, "scatter"),
			"lines":      plot.Lines([]plot.Series{{X: xs, Y: ys, Class: "s1", Legend: "y"}}, 430, 300, "x", "y", trial%3 == 0, "lines"),
			"curves":     plot.Curves([]plot.Series{{X: xs, Y: ys, Class: "a0", Legend: "arm"}}, 880, 320, "x", "y", "curves"),
			"bars":       plot.Bars(counts, offset, math.Max(scale, 1e-3), plot.Tick, 430, 300, "x", "y", "bars"),
			"dendrogram": plot.Dendrogram(n, merges, labels, nil, 880, 320, "dendrogram"),
		} {
			w, h, marks := svgMarks(t, svg)
			for _, m := range marks {
				if !(m.x >= 0 && m.x <= w && m.y >= 0 && m.y <= h) {
					t.Errorf("trial %d (%d values, scale %g): %s's %s at (%g, %g) is outside its viewBox 0 0 %g %g",
						trial, n, scale, name, m.kind, m.x, m.y, w, h)
				}
			}
			if n > 1 && len(marks) == 0 && name != "bars" {
				t.Errorf("trial %d: %s has no marks for %d values", trial, name, n)
			}
		}
	}
}

// mark is a drawn point of data: a circle's centre, the corners of a bar
// or thumbnail, a dendrogram leaf's centre.
type mark struct {
	kind string
	x, y float64
}

// svgMarks returns the viewBox's width and height and the marks of svg.
func svgMarks(t *testing.T, svg string) (w, h float64, marks []mark) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return w, h, marks
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(attr[name], 64)
			if err != nil {
				t.Fatalf("<%s %s=%q>: %v", el.Name.Local, name, attr[name], err)
			}
			return v
		}
		switch {
		case el.Name.Local == "svg":
			var x0, y0 float64
			if _, err := fmt.Sscanf(attr["viewBox"], "%g %g %g %g", &x0, &y0, &w, &h); err != nil || x0 != 0 || y0 != 0 {
				t.Fatalf("viewBox %q", attr["viewBox"])
			}
		case el.Name.Local == "circle":
			marks = append(marks, mark{"circle", num("cx"), num("cy")})
		case el.Name.Local == "image" || attr["class"] == "bar":
			x, y := num("x"), num("y")
			marks = append(marks, mark{el.Name.Local, x, y}, mark{el.Name.Local, x + num("width"), y + num("height")})
		case el.Name.Local == "rect" && attr["fill"] != "" && attr["stroke"] == "" && attr["height"] == "6":
			// A dendrogram leaf's swatch: its centre is the leaf.
			marks = append(marks, mark{"leaf", num("x") + num("width")/2, num("y") + 3})
		}
	}
}
