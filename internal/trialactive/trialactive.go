// Package trialactive chooses odd-one-out and rank trials actively (issue
// 27): from a pool of random candidates it picks those whose answer the
// current fit is least sure of — uncertainty sampling, as the triplet
// active design's uncertainty score: for odd-one-out the largest entropy
// of the native model's probabilities of the three answers
// (embed.OddOneOutProbs), for rank the largest entropy of its first choice
// among the references (embed.RankFirstProbs). It knows nothing of SQL or
// HTTP; the simulator drives it offline.
package trialactive

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// Entropy returns the entropy (nats) of the native model's answer to the
// trial showing items at the points x with t-STE's α: log 3 when all
// three answers are as likely, near 0 when the fit is sure.
func Entropy(x *mat.Dense, alpha float64, items [3]int) float64 {
	var p [3]float64
	embed.OddOneOutProbs(&p, x, alpha, items)
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// RankEntropy returns the entropy (nats) of the native rank model's first
// choice among options for query at the points x with t-STE's α: log n
// when every reference is as likely, near 0 when the fit is sure.
func RankEntropy(x *mat.Dense, alpha float64, query int, options []int) float64 {
	p := make([]float64, len(options))
	embed.RankFirstProbs(p, x, alpha, query, options)
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// ChooseRank returns the most uncertain (RankEntropy) of candidates
// random sets of n references for query: n distinct items other than the
// query, in random display order. It panics unless candidates ≥ 1 and x
// has more than n rows.
func ChooseRank(rng *rand.Rand, x *mat.Dense, alpha float64, query, n, candidates int) []int {
	items, _ := x.Dims()
	if candidates < 1 || items <= n || query < 0 || query >= items {
		panic("trialactive: ChooseRank needs a candidate, a query among the items and more items than references")
	}
	var best []int
	bestH := math.Inf(-1)
	opts := make([]int, 0, n)
	for range candidates {
		opts = opts[:0]
		for len(opts) < n {
			v := rng.IntN(items)
			if v == query || slices.Contains(opts, v) {
				continue
			}
			opts = append(opts, v)
		}
		if h := RankEntropy(x, alpha, query, opts); h > bestH {
			bestH = h
			best = append(best[:0], opts...)
		}
	}
	return best
}

// scored is a candidate with its entropy.
type scored struct {
	items [3]int
	h     float64
}

// minHeap keeps the best m candidates, the least uncertain on top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].h < h[j].h }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(v any)        { *h = append(*h, v.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// Choose appends to dst the m most uncertain of candidates uniformly
// random triples of distinct items (three items in random display
// order) drawn with rng, most uncertain first. It panics unless
// 1 ≤ m ≤ candidates and x has at least 3 rows.
func Choose(dst [][3]int, rng *rand.Rand, x *mat.Dense, alpha float64, m, candidates int) [][3]int {
	n, _ := x.Dims()
	if m < 1 || m > candidates || n < 3 {
		panic("trialactive: Choose needs 1 ≤ m ≤ candidates and 3 items")
	}
	h := make(minHeap, 0, m+1)
	for range candidates {
		a, b, c := triplet.RandomQuestion(rng, n)
		s := scored{[3]int{a, b, c}, Entropy(x, alpha, [3]int{a, b, c})}
		if len(h) < m {
			heap.Push(&h, s)
		} else if s.h > h[0].h {
			h[0] = s
			heap.Fix(&h, 0)
		}
	}
	start := len(dst)
	for h.Len() > 0 {
		dst = append(dst, heap.Pop(&h).(scored).items)
	}
	// Popped least uncertain first: reverse the appended part.
	for i, j := start, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}
