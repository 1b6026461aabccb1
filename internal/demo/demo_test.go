package demo

import (
	"bytes"
	"image/png"
	"testing"
)

func TestItems(t *testing.T) {
	items := Items()
	if len(items) != Count {
		t.Fatalf("%d items, want %d", len(items), Count)
	}
	coords := Coordinates()
	seen := map[string]bool{}
	for i, it := range items {
		if it.ContentType != "image/png" || it.Width != side || it.Height != side {
			t.Errorf("%s: %s %d×%d", it.Name, it.ContentType, it.Width, it.Height)
		}
		if seen[it.SHA256] {
			t.Errorf("%s duplicates another item", it.Name)
		}
		seen[it.SHA256] = true
		if h, r := coords[i][0], coords[i][1]; h < 0 || h > maxHue || r < minRadius || r > maxRadius {
			t.Errorf("%s: coordinates %v outside the ranges", it.Name, coords[i])
		}
		// The drawn disk's area must match its radius: count foreground pixels.
		m, err := png.Decode(bytes.NewReader(it.Data))
		if err != nil {
			t.Fatal(err)
		}
		var covered float64
		bounds := m.Bounds()
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				r, g, b, _ := m.At(x, y).RGBA()
				if r>>8 != 246 || g>>8 != 244 || b>>8 != 240 {
					covered++
				}
			}
		}
		want := 3.14159 * coords[i][1] * coords[i][1]
		if covered < 0.95*want || covered > 1.1*want {
			t.Errorf("%s: %v pixels drawn, want about %.0f for radius %.1f", it.Name, covered, want, coords[i][1])
		}
	}
}

func TestCoordinatesStable(t *testing.T) {
	a, b := Coordinates(), Coordinates()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("item %d: %v then %v", i, a[i], b[i])
		}
	}
}
