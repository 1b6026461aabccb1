package kernel

import (
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// The paper's MNIST setting (Kleindessner & von Luxburg 2017, section 4.2):
// n = 10,000 points, 30 landmarks, 150n = 1.5 million landmark triplets,
// here from a 10-cluster Gaussian mixture in 10 dimensions answered by the
// simulated oracle with error probability 0.15 (the paper's e_p).
const (
	benchN        = 10000
	benchL        = 30
	benchTriplets = 150 * benchN
)

var benchData = map[[2]int]struct {
	ts []triplet.Triplet
	lm []int
}{}
var benchMu sync.Mutex

// landmarkSet returns, once per (kind, n), m = 150n landmark triplets of
// the design of section 2.3 for kind.
func landmarkSet(kind Kind, n int) ([]triplet.Triplet, []int) {
	benchMu.Lock()
	defer benchMu.Unlock()
	key := [2]int{int(kind), n}
	if d, ok := benchData[key]; ok {
		return d.ts, d.lm
	}
	rng := triplet.NewRand(100)
	x, _ := triplet.GaussianMixture(rng, n, 10, 10, 4)
	lm := rng.Perm(n)[:benchL]
	o := triplet.NewOracle(x, 0.15, 101)
	qs := landmarkTriplets(rng, kind, n, lm, 150*n)
	ts := make([]triplet.Triplet, len(qs))
	for i, q := range qs {
		ts[i] = o.Answer(q.Anchor, q.Closer, q.Farther)
	}
	benchData[key] = struct {
		ts []triplet.Triplet
		lm []int
	}{ts, lm}
	return ts, lm
}

func benchFeaturesPCA(b *testing.B, kind Kind) {
	ts, lm := landmarkSet(kind, benchN)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := NewFeatures(kind, benchN, ts, lm)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.PCA(2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLandmarkK1PCA: features + 2-component kernel PCA, n = 10,000,
// 30 landmarks, 1.5 million triplets (target ≤ 1 s, ≤ 1 GB).
func BenchmarkLandmarkK1PCA(b *testing.B) { benchFeaturesPCA(b, K1) }

// BenchmarkLandmarkK2PCA: the same for k2.
func BenchmarkLandmarkK2PCA(b *testing.B) { benchFeaturesPCA(b, K2) }

// BenchmarkMatrix5000: the full 5,000 × 5,000 k1 matrix with the fix, from
// the landmark design with 150n triplets (target ≤ 3 s).
func BenchmarkMatrix5000K1(b *testing.B) { benchMatrix(b, K1) }

// BenchmarkMatrix5000K2: the same for k2.
func BenchmarkMatrix5000K2(b *testing.B) { benchMatrix(b, K2) }

func benchMatrix(b *testing.B, kind Kind) {
	ts, lm := landmarkSet(kind, 5000)
	f, err := NewFeatures(kind, 5000, ts, lm)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Matrix(f, true)
	}
}

// BenchmarkMatrix5000General: the full 5,000 × 5,000 k1 matrix with the fix
// from 750,000 random (non-landmark) triplets: the sparse general path, where
// the fix needs an eigenvalue computation.
func BenchmarkMatrix5000General(b *testing.B) {
	rng := triplet.NewRand(102)
	x, _ := triplet.GaussianMixture(rng, 5000, 10, 10, 4)
	o := triplet.NewOracle(x, 0.15, 103)
	ts := triplet.RandomTriplets(rng, o, 150*5000)
	f, err := NewFeatures(K1, 5000, ts, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Matrix(f, true)
	}
}
