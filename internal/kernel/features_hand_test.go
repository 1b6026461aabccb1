package kernel

import (
	"math"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// The brute-force tests compare kernel values k(a, b) = Φ(x_a)ᵀΦ(x_b), which
// a global sign flip of Φ, or swapping closer and farther everywhere, leaves
// unchanged. The tests below pin the feature vectors themselves on tiny sets
// of answers, computed by hand from the definitions of Kleindessner & von
// Luxburg (2017), section 2: eq. 2 (k1), eq. 5 (k2) and the
// "contradicting similarity triplets" paragraph (Φ̃ with counts, then
// Φ = Φ̃/‖Φ̃‖). A triplet (a, i, j) means d(x_a, x_i) < d(x_a, x_j).

// wantRow is one feature vector: its nonzero coordinates by column.
type wantRow map[int]float64

func checkRows(t *testing.T, f *Features, want []wantRow) {
	t.Helper()
	if f.N != len(want) {
		t.Fatalf("%v: N = %d, want %d", f.Kind, f.N, len(want))
	}
	nnz := 0
	for a, w := range want {
		cols, vals := f.Row(a)
		nnz += len(w)
		if len(cols) != len(w) {
			t.Errorf("%v: row %d = %v %v, want %v", f.Kind, a, cols, vals, w)
			continue
		}
		for k, c := range cols {
			x, ok := w[c]
			if !ok || math.Abs(vals[k]-x) > 1e-12 {
				t.Errorf("%v: row %d = %v %v, want %v", f.Kind, a, cols, vals, w)
				break
			}
		}
	}
	if f.NNZ() != nnz {
		t.Errorf("%v: NNZ = %d, want %d", f.Kind, f.NNZ(), nnz)
	}
}

func checkGram(t *testing.T, f *Features, want [][]float64) {
	t.Helper()
	for a := range want {
		for b := range want[a] {
			if got := f.At(a, b); math.Abs(got-want[a][b]) > 1e-12 {
				t.Errorf("%v: k(%d, %d) = %v, want %v", f.Kind, a, b, got, want[a][b])
			}
		}
	}
}

// TestFeaturesK1ByHand pins Φ_k1 on 4 items.
//
// The columns are the pairs i < j in the order of pairIndex:
// {0,1}=0, {0,2}=1, {0,3}=2, {1,2}=3, {1,3}=4, {2,3}=5, and by eq. 2 with
// counts, Φ̃(x_a)_{ij} = (#(a,i,j) − #(a,j,i)) / (#(a,i,j) + #(a,j,i)).
//
//	anchor 0: (0,1,2) twice, (0,2,1) once, (0,3,1) once
//	  {1,2}: (2 − 1)/(2 + 1) = 1/3;  {1,3}: (#(0,1,3)=0 − #(0,3,1)=1)/1 = −1
//	  ‖Φ̃‖ = √(1/9 + 1) = √10/3, so Φ(x_0) = (col 3: 1/√10, col 4: −3/√10)
//	anchor 1: no triplets, so Φ(x_1) = 0 (the paper's 0/0 = 0)
//	anchor 2: (2,0,1), (2,3,0)
//	  {0,1}: +1;  {0,3}: (#(2,0,3)=0 − #(2,3,0)=1)/1 = −1
//	  Φ(x_2) = (col 0: 1/√2, col 2: −1/√2)
//	anchor 3: (3,1,2), (3,0,1)
//	  {1,2}: +1;  {0,1}: +1;  Φ(x_3) = (col 0: 1/√2, col 3: 1/√2)
//
// For anchors 2 and 3 (no repeats, no contradictions) eq. 2's own factor
// 1/√|{triplets with anchor a}| = 1/√2 gives the same values.
//
// k1 (eq. 3): k(0,3) = (1/√10)(1/√2) = 1/√20; k(2,3) = (1/√2)(1/√2) = 1/2;
// k(0,2) = 0 (no common column); k(a,a) = 1 except k(1,1) = 0.
func TestFeaturesK1ByHand(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{
		tr(0, 1, 2), tr(0, 1, 2), tr(0, 2, 1), tr(0, 3, 1),
		tr(2, 0, 1), tr(2, 3, 0),
		tr(3, 1, 2), tr(3, 0, 1),
	}
	f, err := NewFeatures(K1, 4, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dim != 6 || f.Landmarks != nil {
		t.Errorf("Dim = %d, Landmarks = %v; want C(4,2) = 6 and nil", f.Dim, f.Landmarks)
	}
	r2, r10 := 1/math.Sqrt2, 1/math.Sqrt(10)
	checkRows(t, f, []wantRow{
		{3: r10, 4: -3 * r10},
		{},
		{0: r2, 2: -r2},
		{0: r2, 3: r2},
	})
	r20 := 1 / math.Sqrt(20)
	checkGram(t, f, [][]float64{
		{1, 0, 0, r20},
		{0, 0, 0, 0},
		{0, 0, 1, 0.5},
		{r20, 0, 0.5, 1},
	})
}

// TestFeaturesK2ByHand pins Φ_k2 on 4 items.
//
// The columns are the ordered pairs (i, j), column i·4 + j, and by eq. 5
// revised for counts, Φ̃(x_a)_{(i,j)} = (#(i,a,j) − #(i,j,a)) / (#(i,a,j) +
// #(i,j,a)): +1 where a was the closer option to anchor i against j.
// Triplets: (0,1,2) twice, (0,2,1), (1,3,0), (3,1,0), (2,1,3), (0,1,3),
// (2,3,0).
//
//	item 0 (an option in (1,3,0), (3,1,0), (2,3,0), always farther):
//	  (1,3) col 7: −1; (3,1) col 13: −1; (2,3) col 11: −1
//	  Φ(x_0) = −1/√3 at cols 7, 11, 13
//	item 1: (0,2) col 2: (#(0,1,2)=2 − #(0,2,1)=1)/3 = 1/3;
//	  (3,0) col 12: +1 from (3,1,0); (2,3) col 11: +1 from (2,1,3);
//	  (0,3) col 3: +1 from (0,1,3)
//	  ‖Φ̃‖ = √(1/9 + 3) = 2√7/3, so Φ(x_1) = (col 2: 1/(2√7),
//	  cols 3, 11, 12: 3/(2√7))
//	item 2: (0,1) col 1: (#(0,2,1)=1 − #(0,1,2)=2)/3 = −1/3, alone, so
//	  Φ(x_2) = (col 1: −1)
//	item 3: (1,0) col 4: +1 from (1,3,0); (2,1) col 9: −1 from (2,1,3);
//	  (0,1) col 1: −1 from (0,1,3); (2,0) col 8: +1 from (2,3,0)
//	  Φ(x_3) = ±1/2: (col 1: −1/2, col 4: 1/2, col 8: 1/2, col 9: −1/2)
//
// Items 0 and 3 have no repeats or contradictions: eq. 5's own factor
// 1/√|{triplets with a as an option}| is 1/√3 and 1/√4, the same.
//
// k2 (eq. 5): k(0,1) = (−1/√3)(3/(2√7)) at col 11 = −3/(2√21);
// k(2,3) = (−1)(−1/2) at col 1 = 1/2; the other pairs share no column: 0.
func TestFeaturesK2ByHand(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{
		tr(0, 1, 2), tr(0, 1, 2), tr(0, 2, 1), tr(1, 3, 0),
		tr(3, 1, 0), tr(2, 1, 3), tr(0, 1, 3), tr(2, 3, 0),
	}
	f, err := NewFeatures(K2, 4, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dim != 16 || f.Landmarks != nil {
		t.Errorf("Dim = %d, Landmarks = %v; want 4² = 16 and nil", f.Dim, f.Landmarks)
	}
	r3, r7 := 1/math.Sqrt(3), 1/(2*math.Sqrt(7))
	checkRows(t, f, []wantRow{
		{7: -r3, 11: -r3, 13: -r3},
		{2: r7, 3: 3 * r7, 11: 3 * r7, 12: 3 * r7},
		{1: -1},
		{1: -0.5, 4: 0.5, 8: 0.5, 9: -0.5},
	})
	k01 := -3 / (2 * math.Sqrt(21))
	checkGram(t, f, [][]float64{
		{1, k01, 0, 0},
		{k01, 1, 0, 0},
		{0, 0, 1, 0.5},
		{0, 0, 0.5, 1},
	})
}

// TestFeaturesLandmarkRowsMatchGeneral pins the rows of the compressed
// landmark feature space (section 2.4) against the general rows, which the
// two tests above pin by hand. In the compressed space the landmarks are
// numbered by their position p in Landmarks (given here out of order):
//
//   - k1: column pairIndex(|L|, p, q), p < q, holds eq. 2 for the options
//     l_p, l_q in that order, so it equals the general coordinate of the
//     pair {l_p, l_q} when l_p < l_q and its negative otherwise; no other
//     coordinate is nonzero, since every option is a landmark.
//   - k2: column p·|L| + q holds the general coordinate (l_p, l_q) (anchor
//     l_p, other option l_q); rows are those coordinates only, renormalised,
//     which for a non-landmark item is all of its general row.
func TestFeaturesLandmarkRowsMatchGeneral(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(12)
	for trial := 0; trial < 20; trial++ {
		n := 5 + rng.IntN(5)
		lm := rng.Perm(n)[:2+rng.IntN(3)]
		nl := len(lm)
		for _, kind := range []Kind{K1, K2} {
			ts := landmarkTriplets(rng, kind, n, lm, 5+rng.IntN(60))
			f, err := NewFeatures(kind, n, ts, lm)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewFeatures(kind, n, ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			for a := 0; a < n; a++ {
				gc, gv := g.Row(a)
				general := map[int]float64{}
				for k, c := range gc {
					general[c] = gv[k]
				}
				want := wantRow{}
				var norm2 float64
				for p := 0; p < nl; p++ {
					for q := 0; q < nl; q++ {
						if p == q {
							continue
						}
						switch {
						case kind == K1 && p < q:
							i, j, sign := lm[p], lm[q], 1.0
							if i > j {
								i, j, sign = j, i, -1
							}
							if x := general[pairIndex(n, i, j)]; x != 0 {
								want[pairIndex(nl, p, q)] = sign * x
								norm2 += x * x
							}
						case kind == K2:
							if x := general[lm[p]*n+lm[q]]; x != 0 {
								want[p*nl+q] = x
								norm2 += x * x
							}
						}
					}
				}
				if kind == K1 && len(want) != len(gc) {
					t.Fatalf("k1 row %d: general row %v %v has coordinates outside the landmark pairs %v", a, gc, gv, lm)
				}
				for c := range want {
					want[c] /= math.Sqrt(norm2)
				}
				cols, vals := f.Row(a)
				if len(cols) != len(want) {
					t.Fatalf("%v landmarks %v row %d = %v %v, want %v", kind, lm, a, cols, vals, want)
				}
				for k, c := range cols {
					if x, ok := want[c]; !ok || math.Abs(vals[k]-x) > 1e-12 {
						t.Fatalf("%v landmarks %v row %d = %v %v, want %v", kind, lm, a, cols, vals, want)
					}
				}
			}
		}
	}
}

// TestFeaturesBoundaries: zero items is a valid (empty) input, −1 items is
// not; a landmark must be an item 0..n−1, so item 0 is accepted and n is
// refused (with an error, not an index out of range); a landmark named
// twice is refused even when its first position is 0.
func TestFeaturesBoundaries(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{K1, K2} {
		f, err := NewFeatures(kind, 0, nil, nil)
		if err != nil || f.N != 0 || f.Dim != 0 || f.NNZ() != 0 {
			t.Errorf("%v with 0 items: %+v, %v; want an empty feature set", kind, f, err)
		}
		if _, err := NewFeatures(kind, -1, nil, nil); err == nil {
			t.Errorf("%v with -1 items: no error", kind)
		}
		if _, err := NewFeatures(kind, 4, nil, []int{0, 3}); err != nil {
			t.Errorf("%v with landmarks {0, 3} of 4 items: %v", kind, err)
		}
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("%v with landmark 4 of 4 items: panic %v, want an error", kind, e)
				}
			}()
			if _, err := NewFeatures(kind, 4, nil, []int{0, 4}); err == nil || !strings.Contains(err.Error(), "landmark 4 outside 0..3") {
				t.Errorf("%v with landmark 4 of 4 items: error %v, want one naming the range 0..3", kind, err)
			}
		}()
		// A landmark named twice, at position 0 and again.
		if _, err := NewFeatures(kind, 4, nil, []int{2, 2}); err == nil || !strings.Contains(err.Error(), "landmark 2 named twice") {
			t.Errorf("%v with landmarks {2, 2}: error %v, want one naming the repeat", kind, err)
		}
	}
}
