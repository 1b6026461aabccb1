// Package oddactive chooses odd-one-out trials actively (issue 27): from a
// pool of random candidate triples it picks those whose answer the current
// fit is least sure of, the largest entropy of the native model's
// probabilities of the three answers (embed.OddOneOutProbs; uncertainty
// sampling, as the triplet active design's uncertainty score, Tamuz et
// al. 2011's "adaptive" questions reduced to their predictive entropy).
// It knows nothing of SQL or HTTP; the simulator drives it offline.
package oddactive

import (
	"container/heap"
	"math"
	"math/rand/v2"

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
		panic("oddactive: Choose needs 1 ≤ m ≤ candidates and 3 items")
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
