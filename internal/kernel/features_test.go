package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// bruteFeatures evaluates the contradiction-aware feature maps of
// Kleindessner & von Luxburg (2017), section 2, straight from the
// definitions: k1 over all pairs i < j with anchor a (eq. 2), k2 over all
// ordered pairs (i, j) with a as an option (eq. 5), counting every triplet
// by a scan of ts, 0/0 = 0, then unit norm. cols, when not nil, restricts
// the coordinates to those for which cols(i, j) is true (used for the
// landmark compression of section 2.4).
func bruteFeatures(kind Kind, n int, ts []triplet.Triplet, cols func(i, j int) bool) [][]float64 {
	count := func(a, i, j int) int { // #(a, i, j)
		c := 0
		for _, t := range ts {
			if t.Anchor == a && t.Closer == i && t.Farther == j {
				c++
			}
		}
		return c
	}
	phi := make([][]float64, n)
	for a := 0; a < n; a++ {
		var v []float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if kind == K1 && i >= j {
					continue
				}
				if cols != nil && !cols(i, j) {
					continue
				}
				var p, m int
				if kind == K1 {
					p, m = count(a, i, j), count(a, j, i)
				} else {
					p, m = count(i, a, j), count(i, j, a)
				}
				x := 0.0
				if p+m > 0 {
					x = float64(p-m) / float64(p+m)
				}
				v = append(v, x)
			}
		}
		var s float64
		for _, x := range v {
			s += x * x
		}
		if s > 0 {
			for k := range v {
				v[k] /= math.Sqrt(s)
			}
		}
		phi[a] = v
	}
	return phi
}

func dot(x, y []float64) float64 {
	var s float64
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// randomTriplets draws m triplets over n items; with small n there are many
// repeats and contradictions.
func randomTriplets(rng *rand.Rand, n, m int) []triplet.Triplet {
	ts := make([]triplet.Triplet, m)
	for k := range ts {
		p := rng.Perm(n)
		ts[k] = triplet.Triplet{Anchor: p[0], Closer: p[1], Farther: p[2]}
	}
	return ts
}

func checkKernel(t *testing.T, f *Features, want [][]float64, skip func(a, b int) bool) {
	t.Helper()
	for a := 0; a < f.N; a++ {
		for b := 0; b < f.N; b++ {
			if skip != nil && skip(a, b) {
				continue
			}
			w := dot(want[a], want[b])
			if got := f.At(a, b); math.Abs(got-w) > 1e-12 {
				t.Fatalf("%v: k(%d, %d) = %v, brute force %v", f.Kind, a, b, got, w)
			}
		}
	}
}

func TestFeaturesBruteForce(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(3)
	contradictions := 0
	for trial := 0; trial < 40; trial++ {
		n := 3 + rng.IntN(6)
		ts := randomTriplets(rng, n, rng.IntN(80))
		contradictions += len(triplet.VotesOf(ts).Contradictions())
		for _, kind := range []Kind{K1, K2} {
			f, err := NewFeatures(kind, n, ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteFeatures(kind, n, ts, nil)
			checkKernel(t, f, want, nil)
			for a := 0; a < n; a++ {
				d := f.At(a, a)
				if !(math.Abs(d-1) < 1e-12 || d == 0) {
					t.Fatalf("%v: row %d has squared norm %v, want 1 or 0", kind, a, d)
				}
			}
		}
	}
	if contradictions == 0 {
		t.Fatal("the random sets had no contradictions; the test does not cover them")
	}
}

func TestFeaturesCancellingVotes(t *testing.T) {
	t.Parallel()
	// One question answered both ways once: the coordinate is 0/... = 0,
	// so item 0 (k1) has the zero feature vector.
	ts := []triplet.Triplet{tr(0, 1, 2), tr(0, 2, 1), tr(1, 0, 2), tr(1, 0, 2), tr(1, 2, 0)}
	f, err := NewFeatures(K1, 3, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.At(0, 0); got != 0 {
		t.Errorf("k1(0,0) = %v, want 0", got)
	}
	// Item 1: #(1,0,2) = 2, #(1,2,0) = 1 → (2-1)/3, normalised to ±1.
	cols, vals := f.Row(1)
	if len(cols) != 1 || math.Abs(vals[0]-1) > 1e-15 {
		t.Errorf("row 1 = %v %v, want one coordinate 1", cols, vals)
	}
}

// landmarkTriplets draws m triplets of the landmark design of section 2.3.
func landmarkTriplets(rng *rand.Rand, kind Kind, n int, lm []int, m int) []triplet.Triplet {
	ts := make([]triplet.Triplet, 0, m)
	for len(ts) < m {
		p := rng.Perm(len(lm))
		x := rng.IntN(n)
		var t triplet.Triplet
		if kind == K1 {
			t = triplet.Triplet{Anchor: x, Closer: lm[p[0]], Farther: lm[p[1]]}
		} else {
			t = triplet.Triplet{Anchor: lm[p[0]], Closer: x, Farther: lm[p[1]]}
		}
		if rng.IntN(2) == 0 {
			t = t.Flip()
		}
		if t.Valid(n) == nil {
			ts = append(ts, t)
		}
	}
	return ts
}

func TestFeaturesLandmarkBruteForce(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(4)
	for trial := 0; trial < 30; trial++ {
		n := 5 + rng.IntN(5)
		lm := rng.Perm(n)[:2+rng.IntN(3)]
		isL := make([]bool, n)
		for _, l := range lm {
			isL[l] = true
		}
		for _, kind := range []Kind{K1, K2} {
			ts := landmarkTriplets(rng, kind, n, lm, rng.IntN(120))
			f, err := NewFeatures(kind, n, ts, lm)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewFeatures(kind, n, ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if kind == K1 {
				// Exact: the compressed kernel equals the general one.
				checkKernel(t, f, bruteFeatures(kind, n, ts, nil), nil)
				if want := len(lm) * (len(lm) - 1) / 2; f.Dim != want {
					t.Fatalf("k1 landmark Dim = %d, want %d", f.Dim, want)
				}
				continue
			}
			if f.Dim != len(lm)*len(lm) {
				t.Fatalf("k2 landmark Dim = %d, want %d", f.Dim, len(lm)*len(lm))
			}
			// The |L|² restriction of eq. 5, renormalised.
			checkKernel(t, f, bruteFeatures(kind, n, ts, func(i, j int) bool { return isL[i] && isL[j] }), nil)
			// Between two non-landmark items it is exactly the general k2.
			for a := 0; a < n; a++ {
				for b := 0; b < n; b++ {
					if isL[a] || isL[b] {
						continue
					}
					if x, y := f.At(a, b), g.At(a, b); math.Abs(x-y) > 1e-12 {
						t.Fatalf("k2(%d,%d): landmark %v, general %v", a, b, x, y)
					}
				}
			}
		}
	}
}

func TestFeaturesErrors(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{tr(0, 1, 2)}
	cases := []struct {
		kind Kind
		n    int
		ts   []triplet.Triplet
		lm   []int
	}{
		{K1, 3, []triplet.Triplet{tr(0, 0, 2)}, nil}, // repeated item
		{K1, 2, ts, nil},         // item outside 0..n-1
		{K1, 4, ts, []int{0, 1}}, // option 2 not a landmark
		{K2, 4, []triplet.Triplet{tr(3, 1, 2)}, []int{1, 2}}, // anchor not a landmark
		{K2, 4, ts, []int{0, 0}},                             // landmark twice
		{K2, 4, ts, []int{0, 9}},                             // landmark outside
		{K1, 4, ts, []int{1}},                                // too few landmarks
		{Kind(7), 4, ts, nil},                                // unknown kind
	}
	for i, c := range cases {
		if _, err := NewFeatures(c.kind, c.n, c.ts, c.lm); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

// tr is a short constructor for test triplets.
func tr(a, b, c int) triplet.Triplet { return triplet.Triplet{Anchor: a, Closer: b, Farther: c} }
