package kernel

import (
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// permutations calls fn with every permutation π of 0..n-1 (π[i] is the
// rank of item i, higher is better, as σ in Jiao & Vert 2016).
func permutations(n int, fn func(pi []int)) {
	pi := make([]int, n)
	used := make([]bool, n)
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			fn(pi)
			return
		}
		for r := 1; r <= n; r++ {
			if !used[r-1] {
				used[r-1] = true
				pi[i] = r
				rec(i + 1)
				used[r-1] = false
			}
		}
	}
	rec(0)
}

// meanFeature is the mean of the Kendall feature map (proof of Theorem 1)
// over the permutations compatible with a partial ranking, so that eq. 7 is
// the inner product of two such means.
func meanFeature(n int, compatible func(pi []int) bool) []float64 {
	m := make([]float64, n*(n-1)/2)
	count := 0
	permutations(n, func(pi []int) {
		if !compatible(pi) {
			return
		}
		count++
		k := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				m[k] += sign(float64(pi[i] - pi[j]))
				k++
			}
		}
	})
	s := 1 / (float64(count) * math.Sqrt(float64(len(m))))
	for k := range m {
		m[k] *= s
	}
	return m
}

// interleaving is eq. 5: the listed items in decreasing rank.
func interleaving(list []int) func(pi []int) bool {
	return func(pi []int) bool {
		for a := 1; a < len(list); a++ {
			if pi[list[a-1]] < pi[list[a]] {
				return false
			}
		}
		return true
	}
}

// topK is eq. 6: σ(i_a) = n + 1 − a (ranks from 1; a from 1).
func topK(list []int) func(pi []int) bool {
	return func(pi []int) bool {
		for a, i := range list {
			if pi[i] != len(pi)-a {
				return false
			}
		}
		return true
	}
}

func TestPartialKernelsBruteForce(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(14)
	for trial := 0; trial < 150; trial++ {
		n := 2 + rng.IntN(6) // 2..7
		a := rng.Perm(n)[:rng.IntN(n+1)]
		b := rng.Perm(n)[:rng.IntN(n+1)]
		got, err := InterleavingKernel(n, a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := dot(meanFeature(n, interleaving(a)), meanFeature(n, interleaving(b)))
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("n=%d a=%v b=%v: Algorithm 3 = %v, eq. 7 = %v", n, a, b, got, want)
		}
		got, err = TopKKernel(n, a, b)
		if err != nil {
			t.Fatal(err)
		}
		want = dot(meanFeature(n, topK(a)), meanFeature(n, topK(b)))
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("n=%d a=%v b=%v: Algorithm 4 = %v, eq. 7 = %v", n, a, b, got, want)
		}
	}
}

func TestPartialKernelsTotal(t *testing.T) {
	t.Parallel()
	// Two total rankings: both algorithms reduce to K_τ (eq. 3). Figure 1
	// of Kleindessner & von Luxburg: tau = 1/3. Lists best first; there the
	// rankings are by distance (x1 nearest), so list the nearest first.
	a := []int{0, 2, 1, 3, 4, 5, 6}
	b := []int{1, 2, 5, 0, 4, 3, 6}
	for name, fn := range map[string]func(int, []int, []int) (float64, error){"interleaving": InterleavingKernel, "top-k": TopKKernel} {
		got, err := fn(7, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-1.0/3) > 1e-12 {
			t.Errorf("%s: %v, want 1/3", name, got)
		}
	}
	if _, err := InterleavingKernel(3, []int{0, 0}, nil); err == nil {
		t.Error("no error for a repeated item")
	}
	if _, err := TopKKernel(3, nil, []int{5}); err == nil {
		t.Error("no error for an item outside 0..n-1")
	}
}

func TestMallowsAndKendallKernel(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(15)
	for trial := 0; trial < 200; trial++ {
		n := rng.IntN(30)
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(5))
			y[i] = float64(rng.IntN(5))
		}
		var nc, nd int
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				switch s := sign(x[i]-x[j]) * sign(y[i]-y[j]); {
				case s > 0:
					nc++
				case s < 0:
					nd++
				}
			}
		}
		if got := Discordant(x, y); got != int64(nd) {
			t.Fatalf("Discordant = %d, brute %d", got, nd)
		}
		if got, want := Mallows(x, y, 0.3), math.Exp(-0.3*float64(nd)); math.Abs(got-want) > 1e-15 {
			t.Fatalf("Mallows = %v, want %v", got, want)
		}
		want := 0.0
		if n >= 2 {
			want = float64(nc-nd) / (float64(n) * float64(n-1) / 2)
		}
		if got := KendallKernel(x, y); math.Abs(got-want) > 1e-12 {
			t.Fatalf("KendallKernel = %v, want %v", got, want)
		}
	}
}
