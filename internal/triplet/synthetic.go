package triplet

import (
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// NewRand returns the seeded generator used across closer, so a seed means
// the same thing in every package.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x636c6f736572)) // "closer"
}

// Gaussian draws n points from N(0, sigma² I) in d dimensions.
func Gaussian(rng *rand.Rand, n, d int, sigma float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = sigma * rng.NormFloat64()
	}
	return x
}

// GaussianMixture draws n points from k spherical unit-variance Gaussian
// clusters in d dimensions whose centres lie at distance sep from the
// origin along random directions. labels[i] is the cluster of point i;
// clusters get n/k points each (the first n%k one more).
func GaussianMixture(rng *rand.Rand, n, d, k int, sep float64) (x *mat.Dense, labels []int) {
	if k < 1 || n < 1 || d < 1 {
		panic("triplet: GaussianMixture needs n, d, k >= 1")
	}
	centres := make([][]float64, k)
	for c := range centres {
		centres[c] = unitVector(rng, d)
		for j := range centres[c] {
			centres[c][j] *= sep
		}
	}
	return aroundCentres(rng, centres, n, 1)
}

// Blobs draws n points from a mixture of k spherical Gaussian clusters of
// standard deviation sd in d dimensions, the centres uniform in the box
// [-box, box]^d, the clusters of (nearly) equal size: point i belongs to
// cluster i mod k. It returns the points and their cluster labels.
//
// Anderton et al. (section 3, "Datasets") describe their 3dgmm and 5dgmm
// sets only as "random draws of 500 points from Gaussian mixtures"; Blobs
// mimics the common way of drawing such sets (scikit-learn's make_blobs
// defaults are k = 3, sd = 1, box = 10), and the reproductions use it with
// those defaults. GaussianMixture places the centres on a sphere
// instead; the reproductions report both.
func Blobs(rng *rand.Rand, n, d, k int, sd, box float64) (x *mat.Dense, labels []int) {
	if n < 1 || d < 1 || k < 1 {
		panic("triplet: Blobs needs n, d, k >= 1")
	}
	centres := make([][]float64, k)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = box * (2*rng.Float64() - 1)
		}
	}
	return aroundCentres(rng, centres, n, sd)
}

// aroundCentres draws n points, point i from the spherical Gaussian of
// standard deviation sd around centre i mod len(centres), and returns them
// with their centres' indices as labels: the one home of the mixtures above.
func aroundCentres(rng *rand.Rand, centres [][]float64, n int, sd float64) (x *mat.Dense, labels []int) {
	x = mat.NewDense(n, len(centres[0]), nil)
	labels = make([]int, n)
	for i := range n {
		c := i % len(centres)
		labels[i] = c
		row := x.RawRowView(i)
		for j := range row {
			row[j] = centres[c][j] + sd*rng.NormFloat64()
		}
	}
	return x, labels
}

// UniformCube draws n points uniformly from [0, 1]^d.
func UniformCube(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.Float64()
	}
	return x
}

// Ball draws n points uniformly from the unit ball in R^d.
func Ball(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range n {
		u := unitVector(rng, d)
		r := math.Pow(rng.Float64(), 1/float64(d))
		row := x.RawRowView(i)
		for j := range row {
			row[j] = r * u[j]
		}
	}
	return x
}

// Sphere draws n points uniformly from the unit sphere S^{d-1} in R^d
// (a (d-1)-dimensional manifold, as in Anderton et al. Table 1).
func Sphere(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range n {
		copy(x.RawRowView(i), unitVector(rng, d))
	}
	return x
}

func unitVector(rng *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for {
		var s float64
		for j := range v {
			v[j] = rng.NormFloat64()
			s += v[j] * v[j]
		}
		if s > 1e-12 {
			s = math.Sqrt(s)
			for j := range v {
				v[j] /= s
			}
			return v
		}
	}
}

// SqDist returns the squared Euclidean distance between rows i and j of x.
func SqDist(x *mat.Dense, i, j int) float64 {
	a, b := x.RawRowView(i), x.RawRowView(j)
	var s float64
	for k := range a {
		d := a[k] - b[k]
		s += d * d
	}
	return s
}

// Oracle answers comparisons from the Euclidean distances between the rows
// of X, giving the wrong answer with probability P. It is safe for
// concurrent use; with one goroutine its answers are deterministic for a seed.
type Oracle struct {
	X *mat.Dense
	P float64

	mu  sync.Mutex
	rng *rand.Rand
}

// NewOracle returns an oracle over the points x, wrong with probability p.
func NewOracle(x *mat.Dense, p float64, seed uint64) *Oracle {
	return &Oracle{X: x, P: p, rng: NewRand(seed)}
}

// Answer asks "is anchor closer to i or to j?" and returns the answer as a
// triplet. Ties in distance are broken towards i.
func (o *Oracle) Answer(anchor, i, j int) Triplet {
	t := Triplet{anchor, i, j}
	if SqDist(o.X, anchor, j) < SqDist(o.X, anchor, i) {
		t = t.Flip()
	}
	if o.P > 0 {
		o.mu.Lock()
		wrong := o.rng.Float64() < o.P
		o.mu.Unlock()
		if wrong {
			t = t.Flip()
		}
	}
	return t
}

// Truth returns the noise-free answer to (anchor; i, j).
func Truth(x *mat.Dense, anchor, i, j int) Triplet {
	if SqDist(x, anchor, j) < SqDist(x, anchor, i) {
		return Triplet{anchor, j, i}
	}
	return Triplet{anchor, i, j}
}

// RandomQuestion draws a uniformly random question (anchor; i, j) of three
// distinct items out of n >= 3.
func RandomQuestion(rng *rand.Rand, n int) (anchor, i, j int) {
	if n < 3 {
		panic("triplet: RandomQuestion needs n >= 3")
	}
	anchor = rng.IntN(n)
	i = rng.IntN(n - 1)
	if i >= anchor {
		i++
	}
	for {
		j = rng.IntN(n)
		if j != anchor && j != i {
			return anchor, i, j
		}
	}
}

// RandomTriplets returns m random questions over the points of the oracle,
// answered by it.
func RandomTriplets(rng *rand.Rand, o *Oracle, m int) []Triplet {
	n, _ := o.X.Dims()
	ts := make([]Triplet, m)
	for k := range ts {
		a, i, j := RandomQuestion(rng, n)
		ts[k] = o.Answer(a, i, j)
	}
	return ts
}

// AllTriplets returns every question (a; j, k), j < k, over the points x,
// answered without noise: n·C(n-1, 2) triplets.
func AllTriplets(x *mat.Dense) []Triplet {
	n, _ := x.Dims()
	ts := make([]Triplet, 0, n*(n-1)*(n-2)/2)
	for a := range n {
		for j := range n {
			for k := j + 1; k < n; k++ {
				if j != a && k != a {
					ts = append(ts, Truth(x, a, j, k))
				}
			}
		}
	}
	return ts
}

// Split shuffles ts with the seed and returns the first round(testFrac·len)
// as the test set and the rest as the training set. ts is not modified.
func Split(ts []Triplet, testFrac float64, seed uint64) (train, test []Triplet) {
	if testFrac < 0 || testFrac > 1 {
		panic("triplet: Split fraction outside [0, 1]")
	}
	perm := NewRand(seed).Perm(len(ts))
	nTest := int(math.Round(testFrac * float64(len(ts))))
	test = make([]Triplet, 0, nTest)
	train = make([]Triplet, 0, len(ts)-nTest)
	for k, p := range perm {
		if k < nTest {
			test = append(test, ts[p])
		} else {
			train = append(train, ts[p])
		}
	}
	return train, test
}

// Golden is splitmix64's increment, 2⁶⁴ divided by the golden ratio.
const Golden = 0x9e3779b97f4a7c15

// Mix64 is splitmix64's finaliser (Steele, Lea & Flood 2014), the hash the
// designs, the simulator and the analysis derive seeds and held-out
// choices with.
func Mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
