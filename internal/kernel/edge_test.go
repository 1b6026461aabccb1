package kernel

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestSmallAndEmptyInputs runs every method on tiny sets (one item, no
// triplets, as many components or clusters as items) and checks shapes and
// finiteness: nothing may panic or produce NaN.
func TestSmallAndEmptyInputs(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(1)
	for _, n := range []int{1, 2, 3, 5, 8} {
		for _, m := range []int{0, 1, 3, 30} {
			ts := []triplet.Triplet{}
			if n >= 3 {
				ts = randomTriplets(rng, n, m)
			}
			for _, kl := range []struct {
				kind Kind
				lm   []int
			}{{K1, nil}, {K2, nil}, {K1, []int{0, 1}}, {K2, []int{0, 1}}} {
				kind := kl.kind
				if kl.lm != nil && n < 2 {
					continue
				}
				in := ts
				if kl.lm != nil {
					in = nil
					if n >= 3 {
						in = landmarkTriplets(rng, kind, n, kl.lm, m)
					}
				}
				f, err := NewFeatures(kind, n, in, kl.lm)
				if err != nil {
					t.Fatal(err)
				}
				for c := 1; c <= n; c++ {
					x, err := f.PCA(c)
					if err != nil {
						t.Errorf("n=%d m=%d %v PCA(%d): %v", n, m, kind, c, err)
						continue
					}
					xf, err := f.PCAFixed(c)
					if err != nil {
						t.Errorf("fixed: %v", err)
					} else {
						checkFinite(t, xf, n, c)
					}
					checkFinite(t, x, n, c)
					lab := f.KMeans(c, 3, 1, true)
					lab2 := KernelKMeans(Matrix(f, true), c, 3, 1)
					if len(lab) != n || len(lab2) != n {
						t.Error("len")
					}
				}
				if s := Silhouette(Matrix(f, true), make([]int, n)); s != 0 {
					t.Errorf("one cluster: silhouette %v, want 0", s)
				}
				if m := CompleteLinkage(Matrix(f, false)); len(m) != max(n-1, 0) {
					t.Errorf("%d merges for %d items", len(m), n)
				}
			}
		}
	}
}

func checkFinite(t *testing.T, x *mat.Dense, n, c int) {
	t.Helper()
	r, cc := x.Dims()
	if r != n || cc != c {
		t.Fatalf("scores %d×%d, want %d×%d", r, cc, n, c)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < cc; j++ {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("score [%d,%d] = %v", i, j, v)
			}
		}
	}
}
