package recompute

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trialactive"
	"github.com/closer-lab/closer/internal/triplet"
)

// The active design of an odd-one-out or rank study (issue 27). The
// design's state machine (internal/active) is the triplet study's: it
// warms up on random trials, counts the pool's trials answered by their
// key and takes the queries in round robin; only the pool differs. It is
// chosen by internal/trialactive's uncertainty sampling, the choice whose
// benefit docs/reproductions.md measured on simulated crowds, under the
// t-STE fit of the derived triplets the arm's curve fit already made.
const (
	// oddCandidates is the random triples scored per odd-one-out trial of
	// the pool (simulate.OddRun's default).
	oddCandidates = 20
	// rankCandidates is the random reference sets scored per rank trial
	// (simulate.RankRun's default).
	rankCandidates = 50
)

// trialPool returns the next pool of the active arm aa of an odd-one-out
// or rank study, scored against the points x (t-STE of dim dimensions):
// the trials by their key (the three items questions_comparison_once and
// the leases know them by), most uncertain first, and the items each
// shows (collect.Store.ApplyTrialPool). Its random draws follow the
// design's seed and refreshes, as active.Design.NextPool's do.
func trialPool(aa collect.ActiveArm, x *mat.Dense, dim int) ([]active.Question, [][]int, error) {
	d := aa.State
	n := d.N()
	if r, _ := x.Dims(); r != n {
		return nil, nil, fmt.Errorf("a trial pool with %d points for %d items", r, n)
	}
	alpha := embed.NativeAlpha(embed.Options{Method: embed.TSTE, Dim: dim})
	if math.IsNaN(alpha) {
		return nil, nil, fmt.Errorf("no t-STE kernel for %d dimensions", dim)
	}
	m := d.Config().Pool
	rng := triplet.NewRand(triplet.Mix64(d.Config().Seed ^ 0x747269616c + uint64(d.Refreshes()))) // "trial"
	seen := map[triplet.Key]bool{}
	var qs []active.Question
	var options [][]int
	switch aa.Format.Format {
	case study.FormatOddOneOut:
		// Three times the pool's size from the candidates, as a triple
		// drawn twice (in any order) scores the same and would take two
		// places; the first m distinct ones stay.
		for _, it := range trialactive.Choose(nil, rng, x, alpha, 3*m, oddCandidates*m) {
			if len(qs) == m {
				break
			}
			s := slices.Clone(it[:])
			slices.Sort(s)
			k := triplet.Key{Anchor: s[0], J: s[1], K: s[2]}
			if seen[k] {
				continue // drawn twice among the candidates
			}
			seen[k] = true
			qs = append(qs, active.Question{Key: k, Score: trialactive.Entropy(x, alpha, it)})
			options = append(options, it[:])
		}
	case study.FormatRank:
		heads := d.Heads()
		per := (m + len(heads) - 1) / len(heads)
		for _, q := range heads {
			for range per {
				if len(qs) == m {
					break
				}
				opts := trialactive.ChooseRank(rng, x, alpha, q, aa.Format.Rank.N, rankCandidates)
				k, ok := rankKey(q, opts, seen)
				if !ok {
					continue
				}
				seen[k] = true
				qs = append(qs, active.Question{Key: k, Score: trialactive.RankEntropy(x, alpha, q, opts)})
				options = append(options, opts)
			}
		}
	default:
		return nil, nil, fmt.Errorf("the active design's trial pool for %s questions", aa.Format)
	}
	// Most uncertain first: the pool's order is the order of its claims.
	idx := make([]int, len(qs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(qs[b].Score, qs[a].Score) })
	sq, so := make([]active.Question, len(qs)), make([][]int, len(qs))
	for i, j := range idx {
		sq[i], so[i] = qs[j], options[j]
	}
	return sq, so, nil
}

// rankKey is the key of a rank trial of query q showing opts: the query
// and two of its references, the first pair (in opts' order) that no
// trial of the pool has (seen); ok = false when every pair is taken.
func rankKey(q int, opts []int, seen map[triplet.Key]bool) (triplet.Key, bool) {
	for i := range opts {
		for j := i + 1; j < len(opts); j++ {
			k := triplet.QuestionKey(q, opts[i], opts[j])
			if !seen[k] {
				return k, true
			}
		}
	}
	return triplet.Key{}, false
}
