package plot

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
)

// Heatmap draws the square matrix m as an image of side×side (one pixel
// per cell, scaled without smoothing) with a colour scale, and lines
// between clusters: cuts are where the cluster changes, as fractions of
// the side.
func Heatmap(m [][]float64, cuts []float64, side float64, label string) string {
	var b strings.Builder
	svgOpen(&b, side+70, side+20, "heatmap", label)
	k := len(m)
	if k == 0 {
		return empty(&b, "no data yet")
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
	_ = png.Encode(&buf, img) // writing to memory does not fail
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
		side+33, Tick(hi), side+33, side+10, Tick(lo))
	// What the colours mean, along the scale.
	fmt.Fprintf(&b, `<text class="label" transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">kernel value (higher: more alike)</text>`,
		side+64, 10+side/2)
	b.WriteString(`</svg>`)
	return b.String()
}

// ramp is a perceptually ordered colour map from dark blue through teal to
// yellow (viridis stops), for t in [0, 1].
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
