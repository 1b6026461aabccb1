package kernel

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// maxKMeansIter caps the assignment steps of one k-means run (the paper's
// experiments use 100).
const maxKMeansIter = 100

// KernelKMeans clusters the n items of the kernel matrix k into the given
// number of clusters with kernel k-means (Jiao & Vert 2016, Algorithm 1):
// a random initial assignment, then repeated reassignment of every item to
// the cluster whose feature-space mean is nearest,
//
//	d_ij = K_ii − (2/|S_j|) Σ_{l∈S_j} K_il + (1/|S_j|²) Σ_{v,l∈S_j} K_vl,
//
// until no assignment changes (at most 100 steps). A cluster that empties is
// given the item farthest from its own cluster mean. It runs restarts
// seeded runs (in parallel) and keeps the one with the smallest objective
// Σ_i d_{i, j*(i)}. Labels are 0..clusters-1, numbered in order of first
// appearance. It panics if clusters is not in 1..n or restarts < 1.
func KernelKMeans(k mat.Symmetric, clusters, restarts int, seed uint64) []int {
	n := k.SymmetricDim()
	full := fullRows(k)
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = full[i*n+i]
	}
	return bestOfRestarts(n, clusters, restarts, seed, func(lab []int, count []int, dist []float64) {
		c := len(count)
		s := make([]float64, c) // Σ_{l∈S_j} K_il for the current i
		w := make([]float64, c) // Σ_{v,l∈S_j} K_vl
		sAll := make([]float64, n*c)
		for i := 0; i < n; i++ {
			for j := range s {
				s[j] = 0
			}
			row := full[i*n : (i+1)*n]
			for l, x := range row {
				s[lab[l]] += x
			}
			copy(sAll[i*c:], s)
			w[lab[i]] += s[lab[i]]
		}
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				if count[j] == 0 {
					dist[i*c+j] = math.Inf(1)
					continue
				}
				nj := float64(count[j])
				dist[i*c+j] = diag[i] - 2*sAll[i*c+j]/nj + w[j]/(nj*nj)
			}
		}
	})
}

// KMeans runs kernel k-means (Algorithm 1, as KernelKMeans) on the kernel
// of f, with the diagonal-dominance fix if fix is set, without forming the
// n×n matrix when the feature space is small (Dim ≤ 3000, e.g. a landmark
// design): the cluster means are kept explicitly in feature space, so one
// step costs O(nnz·clusters + clusters·Dim) instead of O(n²). For the fixed
// kernel K − λI the distances are corrected exactly:
// d'_ij = d_ij − λ + λ(2·[i ∈ S_j] − 1)/|S_j|. The result equals
// KernelKMeans(Matrix(f, fix), ...) up to rounding. It panics if clusters is
// not in 1..n or restarts < 1.
func (f *Features) KMeans(clusters, restarts int, seed uint64, fix bool) []int {
	if f.Dim > maxFeatureDim {
		return KernelKMeans(Matrix(f, fix), clusters, restarts, seed)
	}
	n, d := f.N, f.Dim
	lambda := 0.0
	if fix {
		lambda = MinEigenvalue(f, nil)
	}
	diag := make([]float64, n)
	for a := 0; a < n; a++ {
		_, v := f.Row(a)
		for _, x := range v {
			diag[a] += x * x
		}
	}
	return bestOfRestarts(n, clusters, restarts, seed, func(lab, count []int, dist []float64) {
		c := len(count)
		sum := make([]float64, c*d)
		for a := 0; a < n; a++ {
			cols, vals := f.Row(a)
			row := sum[lab[a]*d : (lab[a]+1)*d]
			for k, col := range cols {
				row[col] += vals[k]
			}
		}
		w := make([]float64, c)
		for j := range w {
			for _, x := range sum[j*d : (j+1)*d] {
				w[j] += x * x
			}
		}
		for a := 0; a < n; a++ {
			cols, vals := f.Row(a)
			for j := 0; j < c; j++ {
				if count[j] == 0 {
					dist[a*c+j] = math.Inf(1)
					continue
				}
				row := sum[j*d : (j+1)*d]
				var s float64
				for k, col := range cols {
					s += vals[k] * row[col]
				}
				nj := float64(count[j])
				dd := diag[a] - 2*s/nj + w[j]/(nj*nj)
				if lambda != 0 {
					in := 0.0
					if lab[a] == j {
						in = 1
					}
					dd += -lambda + lambda*(2*in-1)/nj
				}
				dist[a*c+j] = dd
			}
		}
	})
}

// KMeans is plain k-means (Lloyd) on the rows of x, run as kernel k-means
// with the linear kernel x xᵀ, so that it is the same algorithm as
// KernelKMeans; the baseline "k-means on the true points".
func KMeans(x mat.Matrix, clusters, restarts int, seed uint64) []int {
	var k mat.SymDense
	k.SymOuterK(1, x)
	return KernelKMeans(&k, clusters, restarts, seed)
}

// fullRows returns k as a full row-major n×n slice, to be read only. A
// *mat.SymDense whose storage already holds both triangles (as Matrix
// returns it) is used in place, without a copy.
func fullRows(k mat.Symmetric) []float64 {
	n := k.SymmetricDim()
	if s, ok := k.(*mat.SymDense); ok {
		raw := s.RawSymmetric()
		if raw.Stride == n && bothTriangles(raw.Data, n) {
			return raw.Data
		}
		out := make([]float64, n*n)
		for i := 0; i < n; i++ {
			copy(out[i*n+i:(i+1)*n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
		}
		mirror(out, n)
		return out
	}
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := k.At(i, j)
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}

// bothTriangles reports whether the row-major n×n data is symmetric.
func bothTriangles(data []float64, n int) bool {
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if data[i*n+j] != data[j*n+i] {
				return false
			}
		}
	}
	return true
}

// bestOfRestarts runs Algorithm 1 restarts times with the distance function
// distances (which fills dist[i*c+j] = d_ij for the assignment lab with
// cluster sizes count) and returns the labels of the best run.
func bestOfRestarts(n, clusters, restarts int, seed uint64, distances func(lab, count []int, dist []float64)) []int {
	if clusters < 1 || clusters > n {
		panic(fmt.Sprintf("kernel: k-means: %d clusters of %d items", clusters, n))
	}
	if restarts < 1 {
		panic(fmt.Sprintf("kernel: k-means: %d restarts", restarts))
	}
	type result struct {
		lab []int
		obj float64
	}
	res := make([]result, restarts)
	// Every restart has its own generator, derived from the seed, so the
	// result does not depend on how the runs are spread over goroutines.
	seeds := make([]uint64, restarts)
	base := triplet.NewRand(seed)
	for r := range seeds {
		seeds[r] = base.Uint64()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for r := 0; r < restarts; r++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lab, obj := kmeansRun(n, clusters, triplet.NewRand(seeds[r]), distances)
			res[r] = result{lab, obj}
		}()
	}
	wg.Wait()
	best := 0
	for r := 1; r < restarts; r++ {
		if res[r].obj < res[best].obj {
			best = r
		}
	}
	return canonical(res[best].lab)
}

func kmeansRun(n, c int, rng *rand.Rand, distances func(lab, count []int, dist []float64)) ([]int, float64) {
	// Step 1: a random assignment with every cluster nonempty.
	lab := make([]int, n)
	perm := rng.Perm(n)
	for i, p := range perm {
		if i < c {
			lab[p] = i
		} else {
			lab[p] = rng.IntN(c)
		}
	}
	count := make([]int, c)
	for _, l := range lab {
		count[l]++
	}
	dist := make([]float64, n*c)
	for it := 0; it < maxKMeansIter; it++ {
		// Step 2: distances to the current means; new assignments.
		distances(lab, count, dist)
		changed := false
		newCount := make([]int, c)
		newLab := make([]int, n)
		for i := 0; i < n; i++ {
			d := dist[i*c : (i+1)*c]
			best := lab[i]
			for j := range d {
				if d[j] < d[best] {
					best = j
				}
			}
			newLab[i] = best
			newCount[best]++
			if best != lab[i] {
				changed = true
			}
		}
		// An emptied cluster takes the item farthest from its new mean.
		for j := 0; j < c; j++ {
			if newCount[j] > 0 {
				continue
			}
			far, fd := -1, 0.0 // the first candidate counts at any distance, even a negative one
			for i := 0; i < n; i++ {
				if newCount[newLab[i]] > 1 && (far < 0 || dist[i*c+newLab[i]] > fd) {
					far, fd = i, dist[i*c+newLab[i]]
				}
			}
			newCount[newLab[far]]--
			newLab[far] = j
			newCount[j]++
			changed = true
		}
		// Step 3: form the updated clusters.
		lab, count = newLab, newCount
		if !changed {
			break
		}
	}
	distances(lab, count, dist)
	var obj float64
	for i := 0; i < n; i++ {
		obj += dist[i*c+lab[i]]
	}
	return lab, obj
}

// canonical renumbers labels in order of first appearance.
func canonical(lab []int) []int {
	m := map[int]int{}
	out := make([]int, len(lab))
	for i, l := range lab {
		v, ok := m[l]
		if !ok {
			v = len(m)
			m[l] = v
		}
		out[i] = v
	}
	return out
}

// Purity returns the purity of a clustering against true classes (Manning
// et al. 2008, as used in Kleindessner & von Luxburg 2017, section 4.2):
// (1/n) Σ_clusters max_class |cluster ∩ class|. It is 1 for a perfect
// clustering. It panics if the lengths differ.
func Purity(pred, truth []int) float64 {
	if len(pred) != len(truth) {
		panic("kernel: Purity: length mismatch")
	}
	if len(pred) == 0 {
		return 0
	}
	type key struct{ p, t int }
	joint := map[key]int{}
	for i := range pred {
		joint[key{pred[i], truth[i]}]++
	}
	best := map[int]int{}
	for k, c := range joint {
		best[k.p] = max(best[k.p], c)
	}
	var s int
	for _, c := range best {
		s += c
	}
	return float64(s) / float64(len(pred))
}

// Distance returns the kernel-induced distance
// sqrt(max(K_ii + K_jj − 2K_ij, 0)) between items i and j.
func Distance(k mat.Symmetric, i, j int) float64 {
	return math.Sqrt(max(k.At(i, i)+k.At(j, j)-2*k.At(i, j), 0))
}

// Silhouette returns the mean silhouette width (Rousseeuw 1987) of labels
// under the kernel-induced distance: for each item, a = mean distance to
// the rest of its cluster, b = smallest mean distance to another cluster,
// s = (b − a)/max(a, b), and s = 0 for an item alone in its cluster. It
// returns 0 when there is only one cluster. It panics if the lengths differ.
func Silhouette(k mat.Symmetric, labels []int) float64 {
	n := k.SymmetricDim()
	if len(labels) != n {
		panic("kernel: Silhouette: length mismatch")
	}
	lab := canonical(labels)
	c := 0
	for _, l := range lab {
		c = max(c, l+1)
	}
	if c < 2 {
		return 0
	}
	size := make([]int, c)
	for _, l := range lab {
		size[l]++
	}
	full := fullRows(k)
	s := make([]float64, n)
	parallelRange(n, func(lo, hi int) {
		sum := make([]float64, c)
		for i := lo; i < hi; i++ {
			for j := range sum {
				sum[j] = 0
			}
			for j := 0; j < n; j++ {
				if j != i {
					sum[lab[j]] += math.Sqrt(max(full[i*n+i]+full[j*n+j]-2*full[i*n+j], 0))
				}
			}
			own := lab[i]
			if size[own] == 1 {
				continue
			}
			a := sum[own] / float64(size[own]-1)
			b := math.Inf(1)
			for j := 0; j < c; j++ {
				if j != own {
					b = min(b, sum[j]/float64(size[j]))
				}
			}
			if m := max(a, b); m > 0 {
				s[i] = (b - a) / m
			}
		}
	})
	var t float64
	for _, v := range s {
		t += v
	}
	return t / float64(n)
}

// Merge is one step of a hierarchical clustering: clusters A and B join at
// the given height into a new cluster of Size items. Clusters are numbered
// as in a dendrogram: 0..n-1 are the items, n+t the cluster made by merge t.
type Merge struct {
	A, B   int
	Height float64
	Size   int
}

// CompleteLinkage clusters the items of k hierarchically by complete
// linkage on the kernel-induced distance (Kleindessner & von Luxburg 2017,
// section 4.1: "the kernelized version of complete-linkage clustering"):
// the distance between clusters is the largest distance between their
// members. It returns the n−1 merges in order of height (the dendrogram),
// computed with the nearest-neighbour chain algorithm in O(n²) time and
// memory; A < B within each merge.
func CompleteLinkage(k mat.Symmetric) []Merge {
	n := k.SymmetricDim()
	if n < 2 {
		return nil
	}
	full := fullRows(k)
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d[i*n+j] = math.Sqrt(max(full[i*n+i]+full[j*n+j]-2*full[i*n+j], 0))
		}
	}
	active := make([]bool, n)
	for i := range active {
		active[i] = true
	}
	type slotMerge struct {
		a, b int
		h    float64
	}
	var merges []slotMerge
	chain := make([]int, 0, n)
	for left := n; left > 1; {
		if len(chain) == 0 {
			for i := range active {
				if active[i] {
					chain = append(chain, i)
					break
				}
			}
		}
		a := chain[len(chain)-1]
		prev := -1
		if len(chain) > 1 {
			prev = chain[len(chain)-2]
		}
		// Nearest active neighbour of a, preferring prev on ties so that
		// the chain ends in a reciprocal pair.
		b, bd := prev, math.Inf(1)
		if prev >= 0 {
			bd = d[a*n+prev]
		}
		for j := 0; j < n; j++ {
			if j != a && active[j] && d[a*n+j] < bd {
				b, bd = j, d[a*n+j]
			}
		}
		if b != prev {
			chain = append(chain, b)
			continue
		}
		chain = chain[:len(chain)-2]
		lo, hi := min(a, b), max(a, b)
		merges = append(merges, slotMerge{lo, hi, bd})
		// Lance–Williams for complete linkage: the new cluster (kept in
		// slot lo) is as far from k as the farther of its two parts.
		active[hi] = false
		for j := 0; j < n; j++ {
			if active[j] && j != lo {
				v := max(d[lo*n+j], d[hi*n+j])
				d[lo*n+j], d[j*n+lo] = v, v
			}
		}
		left--
	}
	slices.SortStableFunc(merges, func(x, y slotMerge) int { return cmp.Compare(x.h, y.h) })
	// Relabel slots to dendrogram ids with a union–find over the slots.
	parent := make([]int, n)
	id := make([]int, n)
	size := make([]int, n)
	for i := range parent {
		parent[i], id[i], size[i] = i, i, 1
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	out := make([]Merge, len(merges))
	for t, m := range merges {
		ra, rb := find(m.a), find(m.b)
		ia, ib := id[ra], id[rb]
		s := size[ra] + size[rb]
		parent[rb] = ra
		size[ra] = s
		id[ra] = n + t
		out[t] = Merge{A: min(ia, ib), B: max(ia, ib), Height: m.h, Size: s}
	}
	return out
}

// Cut returns the flat clustering of n items into clusters groups obtained
// by applying the first n − clusters merges of a dendrogram, labels numbered
// in order of first appearance. It panics if clusters is not in 1..n or the
// merges do not fit n.
func Cut(merges []Merge, n, clusters int) []int {
	if clusters < 1 || clusters > n || len(merges) < n-clusters {
		panic(fmt.Sprintf("kernel: Cut: %d clusters of %d items from %d merges", clusters, n, len(merges)))
	}
	parent := make([]int, 2*n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for t, m := range merges[:n-clusters] {
		parent[find(m.A)] = n + t
		parent[find(m.B)] = n + t
	}
	lab := make([]int, n)
	for i := range lab {
		lab[i] = find(i)
	}
	return canonical(lab)
}
