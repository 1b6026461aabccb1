// Package demo generates the items of the demo study: 40 disks that differ
// in hue and in size, so their true 2-D coordinates are known and the whole
// loop (questions, answers, embedding) can be tried and checked at once.
package demo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"sync"

	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/triplet"
)

// Count is the number of demo items.
const Count = 40

const (
	side      = 160  // image side in pixels
	minRadius = 18.0 // pixels
	maxRadius = 72.0
	maxHue    = 270.0 // degrees; hues stop short of the circle so hue is a line, not a loop
)

// Coordinates returns the true coordinates of the demo items, in item
// order: the hue in degrees (0..270) and the radius in pixels (18..72).
// They are a jittered 8×5 grid, the same on every call.
func Coordinates() [][2]float64 {
	rng := triplet.NewRand(2026)
	coords := make([][2]float64, Count)
	for i := range coords {
		col, row := i%8, i/8
		hue := (float64(col) + 0.2 + 0.6*rng.Float64()) / 8 * maxHue
		r := minRadius + (float64(row)+0.2+0.6*rng.Float64())/5*(maxRadius-minRadius)
		coords[i] = [2]float64{hue, r}
	}
	return coords
}

// Items returns the demo images as PNG files named disk-01.png ..
// disk-40.png, in item order. They are drawn and checked once per process
// (tests ask for them hundreds of times, and under -race drawing them
// took a noticeable share of the run); each call returns a new slice
// whose images share their bytes, which nobody may change.
func Items() []media.Image { return slices.Clone(items()) }

var items = sync.OnceValue(drawItems)

// drawItems draws and checks the demo images.
func drawItems() []media.Image {
	coords := Coordinates()
	items := make([]media.Image, len(coords))
	for i, c := range coords {
		name := fmt.Sprintf("disk-%02d.png", i+1)
		data := render(c[0], c[1])
		img, err := media.Check(name, data, 0)
		if err != nil {
			panic("demo: generated image rejected: " + err.Error()) // a bug in render
		}
		items[i] = img
	}
	return items
}

// render draws an anti-aliased disk of the given hue and radius on a light
// background.
func render(hue, radius float64) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, side, side))
	fg := hsv(hue, 0.75, 0.9)
	bg := color.NRGBA{246, 244, 240, 255}
	c := float64(side) / 2
	for y := range side {
		for x := range side {
			d := math.Hypot(float64(x)+0.5-c, float64(y)+0.5-c)
			a := math.Max(0, math.Min(1, radius-d+0.5)) // coverage of the pixel
			m.SetNRGBA(x, y, color.NRGBA{
				R: mix(bg.R, fg.R, a), G: mix(bg.G, fg.G, a), B: mix(bg.B, fg.B, a), A: 255,
			})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return buf.Bytes()
}

func mix(a, b uint8, t float64) uint8 { return uint8(math.Round(float64(a)*(1-t) + float64(b)*t)) }

// hsv converts a hue in degrees and saturation/value in [0,1] to RGB.
func hsv(h, s, v float64) color.NRGBA {
	h = math.Mod(h, 360) / 60
	i := math.Floor(h)
	f := h - i
	p, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	var r, g, b float64
	switch int(i) {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return color.NRGBA{uint8(math.Round(r * 255)), uint8(math.Round(g * 255)), uint8(math.Round(b * 255)), 255}
}
