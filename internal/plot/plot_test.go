package plot_test

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/plot"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestSVGGolden (testdata/svg/*.svg) from the current SVG writer")

// markup is a label that HTML would read as an element, an attribute and
// an entity: every writer must escape it.
const markup = `<b onmouseover="alert('x')">A & B</b>`

// svgCase is one drawing of the SVG writer with what it must hold besides
// its golden file.
type svgCase struct {
	name string
	svg  string
	// count maps a substring to the number of times it must occur.
	count map[string]int
	// texts must be among the drawing's text (titles, labels, ticks) once
	// the XML is decoded: what a reader sees.
	texts []string
}

func svgCases() []svgCase {
	noon := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	// 31 points on a spiral, in 4 clusters: more than Scatter labels.
	var spiral []plot.Point
	for i := range 31 {
		a := float64(i) / 3
		spiral = append(spiral, plot.Point{X: a * math.Cos(a), Y: a * math.Sin(a), Label: fmt.Sprintf("item %d", i), Cluster: i % 4})
	}
	// A chain of 61 leaves: leaf i joins the tree of the leaves before it.
	chain := []plot.Merge{{0, 1, 0.1}}
	for i := 2; i < 61; i++ {
		chain = append(chain, plot.Merge{61 + i - 2, i, 0.1 * float64(i)})
	}
	chainLabels := make([]string, 61)
	for i := range chainLabels {
		chainLabels[i] = fmt.Sprint(i)
	}
	sec := func(x float64) string { return plot.Tick(x) + " s" }
	return []svgCase{
		{name: "scatter-labels", svg: plot.Scatter([]plot.Point{
			{X: 0, Y: 0, Label: "a", Cluster: 0}, {X: 1, Y: 0.5, Label: markup, Cluster: 1}, {X: -1, Y: 2, Label: "c", Cluster: 2},
			{X: 0.5, Y: -1, Label: "no cluster", Cluster: -1}, {X: 2, Y: 1, Label: "e", Cluster: 11},
		}, 430, 340, true, "k1 kernel PCA"),
			count: map[string]int{`<g class="pt">`: 5, `<text class="ptlabel"`: 5, `fill="#888"`: 1, "zoomable": 1},
			texts: []string{markup, "k1 kernel PCA"}},
		{name: "scatter-thumbs", svg: plot.Scatter([]plot.Point{
			{X: 0, Y: 0, Label: "red (#0)", Image: "/img/aa", Cluster: 0},
			{X: 3, Y: 4, Label: markup, Image: `/img/b?x=1&y="2"`, Cluster: 1},
			{X: -2, Y: 1, Label: "blue (#2)", Image: "/img/cc", Cluster: 0},
		}, 880, 560, true, "embedding of the items"),
			count: map[string]int{`<image href=`: 3, "<circle": 0, "ptlabel": 0},
			texts: []string{markup}},
		// One point has no span: it sits in the middle of the room left of
		// its label, 8 + (430 - 8 - 32) / 2 = 203 (pads of 4 + 8/2 and
		// 8 + 6 px × 4 letters), at half the height.
		{name: "scatter-one", svg: plot.Scatter([]plot.Point{{X: 3, Y: 3, Label: "only", Cluster: 0}}, 430, 340, false, "one point"),
			count: map[string]int{"<circle": 1, "zoomable": 0, `cx="203.0" cy="170.0" r="4.0"`: 1}},
		{name: "scatter-many", svg: plot.Scatter(spiral, 430, 340, true, "k2 kernel PCA"),
			count: map[string]int{"<circle": 31, "ptlabel": 0}},
		{name: "scatter-empty", svg: plot.Scatter(nil, 430, 340, true, markup),
			count: map[string]int{`class="empty"`: 1}, texts: []string{"no data", markup}},

		{name: "line-two-series", svg: plot.Lines([]plot.Series{
			{X: []float64{100, 200, 400, 800}, Y: []float64{0.3, 0.22, 0.15, 0.12}, Class: "s1", Legend: "held-out error"},
			{X: []float64{100, 200, 400, 800}, Y: []float64{0.25, math.NaN(), 0.1, 0.08}, Class: "s2", Legend: markup},
		}, 430, 300, "answers used", "triplet error", true, "held-out error versus answers"),
			count: map[string]int{`<circle class="marker s1"`: 4, `<circle class="marker s2"`: 3, `class="legend"`: 2},
			texts: []string{markup, "answers used", "triplet error", "held-out error: 0.3 at 100"}},
		// Axes from 0 (ymin0) to x = 50 and y = 0.2 × 1.05: the point at
		// the right edge, 430 - 12 = 418, and at 264 - 0.2 / 0.21 × 252 = 24.
		{name: "line-one-point", svg: plot.Lines([]plot.Series{{X: []float64{50}, Y: []float64{0.2}, Class: "s1", Legend: "held-out error"}},
			430, 300, "answers used", "triplet error", true, "one run"),
			count: map[string]int{"<circle": 1, `cx="418.0" cy="24.0"`: 1}},
		{name: "line-empty", svg: plot.Lines([]plot.Series{{X: []float64{1}, Y: []float64{math.NaN()}, Class: "s1"}}, 430, 300, "x", "y", true, "no runs"),
			count: map[string]int{`class="empty"`: 1, "<circle": 0}, texts: []string{"no data yet"}},

		// The arms' learning curves: a line per arm with its own class, the
		// legend right of the plot (x from 880 - 150 + 16 = 746), a marker
		// per point whose title names the arm; an arm without points has a
		// legend and no marker.
		{name: "curves-arms", svg: armCurves([]string{"smart", markup, "late"},
			[][]float64{{100, 300, 500}, {120, 260}, nil}, [][]float64{{0.4, 0.2, 0.1}, {0.5, 0.3}, nil}),
			count: map[string]int{`<circle class="marker a0"`: 3, `<circle class="marker a1"`: 2, `<circle class="marker a2"`: 0,
				`class="legend"`: 3, `<text class="legend" x="768.0" y="24.0">smart</text>`: 1},
			texts: []string{"smart: 0.2 at 300", markup + ": 0.3 at 260", "late", "the arm's answers", "held-out error"}},
		// One point: at the plot's right edge, 880 - 150 = 730, and at
		// 284 - 0.25 / (0.25 × 1.05) × 272 = 24.95.
		{name: "curves-one-point", svg: armCurves([]string{"only"}, [][]float64{{40}}, [][]float64{{0.25}}),
			count: map[string]int{"<circle": 1, `cx="730.0" cy="25.0"`: 1}},
		{name: "curves-empty", svg: armCurves([]string{"a", "b"}, [][]float64{nil, nil}, [][]float64{nil, nil}),
			count: map[string]int{`class="empty"`: 1, "<circle": 0}, texts: []string{"no data yet"}},

		{name: "bars-time", svg: plot.Bars([]int{3, 0, 7, 12, 5, 1}, float64(noon.Unix()), 600, plot.TimeFormat(time.Hour), 430, 300, "", "answers", "answers over time"),
			count: map[string]int{`<rect class="bar"`: 5}, texts: []string{"12:00–12:10: 3"}},
		{name: "bars-markup", svg: plot.Bars([]int{4, 9, 1}, 0, 0.5, func(x float64) string { return "<" + sec(x) }, 430, 300, markup, markup, markup),
			count: map[string]int{`<rect class="bar"`: 3}, texts: []string{markup, "<0.5 s–<1 s: 9"}},
		// One bar spans the plot, 48 to 418 less a pixel, and rises to
		// 5 / 5.25 of the 252 px height: 240 px, from 264 - 240 = 24. Ticks
		// every NiceStep(0.01 / 5) = 0.002 s and NiceStep(5.25 / 4) = 2.
		{name: "bars-one", svg: plot.Bars([]int{5}, 0, 0.01, sec, 430, 300, "seconds", "answers", "response-time histogram"),
			count: map[string]int{`<rect class="bar"`: 1, `x="48.5" y="24.0" width="369.0" height="240.0"`: 1, `>0.002 s<`: 1, `>4<`: 1},
			texts: []string{"0 s–0.01 s: 5"}},
		{name: "bars-empty", svg: plot.Bars([]int{0, 0, 0}, 0, 1, plot.Tick, 430, 300, "", "", "answers over time"),
			count: map[string]int{`class="empty"`: 1, "<rect": 0}},

		{name: "heatmap", svg: plot.Heatmap([][]float64{{1, 0.8, 0.1, 0}, {0.8, 1, 0.2, 0.1}, {0.1, 0.2, 1, 0.7}, {0, 0.1, 0.7, 1}}, []float64{0.5}, 330, "kernel heat map"),
			count: map[string]int{"data:image/png;base64,": 1, `class="cut"`: 1}, texts: []string{"1", "0", "kernel value (higher: more alike)"}},
		{name: "heatmap-constant", svg: plot.Heatmap([][]float64{{2, 2}, {2, 2}}, nil, 100, markup),
			count: map[string]int{"data:image/png;base64,": 1, `class="cut"`: 0}},
		{name: "heatmap-empty", svg: plot.Heatmap(nil, nil, 330, "kernel heat map"),
			count: map[string]int{`class="empty"`: 1}},

		{name: "dendrogram", svg: plot.Dendrogram(4, []plot.Merge{{0, 1, 0.2}, {2, 3, 0.5}, {4, 5, 1}}, []string{"a", markup, "c", "d"}, []int{0, 0, 1}, 880, 320, "dendrogram"),
			// The legend: clusters 1 and 2, and grey for item d, which has none.
			count: map[string]int{`class="leaf"`: 4, `<rect x=`: 4, `fill="#888"`: 2, `class="swatch"`: 3},
			texts: []string{markup, "leaf colour:", "cluster 1", "cluster 2", "no cluster"}},
		// Identical items merge at height 0: one tick, the tree drawn at
		// mid-height (the frame has no span).
		{name: "dendrogram-flat", svg: plot.Dendrogram(3, []plot.Merge{{0, 1, 0}, {3, 2, 0}}, []string{"a", "b", "c"}, []int{0, 0, 0}, 880, 320, "dendrogram"),
			count: map[string]int{`class="tick"`: 1, `class="leaf"`: 3, `class="swatch"`: 1}, texts: []string{"cluster 1"}},
		{name: "dendrogram-many", svg: plot.Dendrogram(61, chain, chainLabels, nil, 880, 320, "dendrogram"),
			count: map[string]int{`class="leaf"`: 0, `<rect x=`: 61, `class="swatch"`: 0, "leaf colour": 0}},
		{name: "dendrogram-empty", svg: plot.Dendrogram(1, nil, []string{"a"}, []int{0}, 880, 320, "dendrogram"),
			count: map[string]int{`class="empty"`: 1}},
	}
}

// armCurves draws learning curves as the dashboard draws its arms': arm
// i's answers xs[i] and errors ys[i] as series a<i>, named names[i].
func armCurves(names []string, xs, ys [][]float64) string {
	ss := make([]plot.Series, len(names))
	for i, name := range names {
		ss[i] = plot.Series{X: xs[i], Y: ys[i], Class: fmt.Sprintf("a%d", i), Legend: name}
	}
	return plot.Curves(ss, 880, 320, "the arm's answers", "held-out error", "held-out error of each arm against its answers")
}

// TestSVGGolden draws every plot kind (scatter, line, bars, heat map,
// dendrogram) on ordinary data and on the edge cases (no data, one point,
// labels with markup) and compares each drawing with its golden file in
// testdata/svg, written by -update from the writer (go test
// ./internal/plot -run TestSVGGolden -update) and read through; the
// positions of the one-point cases are worked out by hand below. Each
// drawing must also be well-formed XML whose root is an svg element, with
// its labels escaped (they decode to the text given) and the number of
// marks its data call for.
func TestSVGGolden(t *testing.T) {
	t.Parallel()
	for _, c := range svgCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			texts := decodeSVG(t, c.svg)
			for _, want := range c.texts {
				found := false
				for _, s := range texts {
					found = found || s == want || strings.Contains(s, want)
				}
				if !found {
					t.Errorf("no text %q in %q", want, texts)
				}
			}
			for sub, n := range c.count {
				if got := strings.Count(c.svg, sub); got != n {
					t.Errorf("%q occurs %d times, want %d", sub, got, n)
				}
			}
			if strings.Contains(c.svg, markup) || strings.Contains(c.svg, "<b ") {
				t.Errorf("a label's markup is written unescaped")
			}
			path := filepath.Join("testdata", "svg", c.name+".svg")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c.svg), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with go test ./internal/plot -run TestSVGGolden -update)", err)
			}
			if c.svg != string(want) {
				i := 0
				for i < min(len(c.svg), len(want)) && c.svg[i] == want[i] {
					i++
				}
				t.Errorf("differs from %s at byte %d:\n got %q\nwant %q\n(if the change is meant, rewrite with -update and look at the files)",
					path, i, excerpt(c.svg, i), excerpt(string(want), i))
			}
		})
	}
}

// decodeSVG checks that s is well-formed XML with an svg root of the SVG
// namespace and returns its text, decoded.
func decodeSVG(t *testing.T, s string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	var texts []string
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, excerpt(s, int(d.InputOffset())))
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v, want svg", tok.Name)
			}
			if depth == 0 {
				for _, a := range tok.Attr {
					if a.Name.Local == "aria-label" {
						texts = append(texts, a.Value)
					}
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if depth != 0 {
		t.Fatalf("%d elements left open", depth)
	}
	return texts
}

// excerpt is s around byte i.
func excerpt(s string, i int) string {
	return s[max(0, i-60):min(len(s), i+60)]
}
