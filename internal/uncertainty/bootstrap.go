// Package uncertainty measures how stable an ordinal embedding is: it
// refits the embedding on bootstrap resamples of the answers (whole
// participants when they are known, else single answers; Efron and
// Tibshirani, An Introduction to the Bootstrap, 1993, ch. 6), aligns each
// refit to the reference fit by orthogonal Procrustes (Schönemann 1966),
// and reports each item's spread, how often each item's nearest
// neighbours recur, and a percentile interval of the held-out error.
package uncertainty

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// Defaults and bounds of Options.
const (
	DefaultReps  = 100
	MaxReps      = 2000
	DefaultK     = 5
	DefaultLevel = 0.9
	// DefaultMaxIter caps a warm-started replicate's L-BFGS iterations: it
	// starts at the reference fit, which is already near a replicate's
	// optimum (docs/reproductions.md, issue 28: the time of 100 replicates).
	DefaultMaxIter = 200
)

// Options configure Bootstrap. Zero values take the defaults.
type Options struct {
	// Fit is the reference fit's options (method, parameters, Dim, seed).
	// A replicate starts from the reference fit (Fit.Init is replaced by
	// it) unless Cold, and its Workers is 1 when replicates run in
	// parallel. Fit.MaxIter 0 means DefaultMaxIter for warm replicates.
	Fit embed.Options
	// Reps is the number of bootstrap replicates (default DefaultReps, at
	// most MaxReps).
	Reps int
	// Groups, when set, names the participant of each training answer
	// (any ints, one per answer): a replicate draws participants with
	// replacement and takes all their answers, so the spread includes how
	// much participants differ. Nil: a replicate draws answers.
	Groups []int
	// Test are held-out answers. Each replicate's fit is scored on a
	// resample of them, giving the interval of the held-out error.
	Test []triplet.Triplet
	// K is the number of nearest neighbours whose recurrence is counted
	// (default DefaultK, capped at n − 1).
	K int
	// Level is the coverage of the error interval (default DefaultLevel).
	Level float64
	// Cold fits each replicate from the default start instead of the
	// reference fit: slower, and the honest choice when the reference may
	// sit in one of several optima.
	Cold bool
	// Workers bounds the replicates fitted at once (default GOMAXPROCS);
	// the result does not depend on it.
	Workers int
	// Progress, when set, is called after each replicate (under a lock)
	// with the number done and the total.
	Progress func(done, total int)
}

// Result is the bootstrap of one embedding.
type Result struct {
	// Reference is the reference fit in embed.Normalize's normal form; the
	// replicates are aligned to it and every spread below is in its units
	// (unit root-mean-square radius).
	Reference *mat.Dense
	Reps      int
	// Cov holds each item's d×d covariance of its aligned replicate
	// positions (around their mean): in 2-D, the ellipse to draw.
	Cov []*mat.SymDense
	// RMS is each item's root-mean-square distance of its aligned
	// replicate positions from its reference position.
	RMS []float64
	// Neighbours are each item's K nearest neighbours in the reference,
	// nearest first; NeighbourFreq[i][r] the share of replicates in which
	// Neighbours[i][r] is among item i's K nearest; Stability[i] the mean
	// of NeighbourFreq[i].
	Neighbours    [][]int
	NeighbourFreq [][]float64
	Stability     []float64
	// HeldoutError is the reference fit's error on Test; ErrorLow and
	// ErrorHigh its interval at Level (CentredInterval of the replicates'
	// errors on resampled Test); RepErrors those errors in replicate
	// order. NaN without Test.
	HeldoutError, ErrorLow, ErrorHigh float64
	RepErrors                         []float64
	// Iterations is the replicates' optimiser iterations, summed: with a
	// warm start most stop well before the cap.
	Iterations int
}

// Bootstrap refits the n-item embedding ref (the reference fit of train
// with opt.Fit, at the method's own scale; nil fits it here) on opt.Reps
// bootstrap resamples of train, aligns every refit to the reference and
// summarises the spread. Replicate b is seeded from opt.Fit.Seed and b
// only, and the summaries are reduced in replicate order, so the result
// does not depend on Workers or the scheduling. A cancelled ctx stops it
// with ctx.Err() wrapped.
func Bootstrap(ctx context.Context, n int, train []triplet.Triplet, ref *mat.Dense, opt Options) (*Result, error) {
	if opt.Reps == 0 {
		opt.Reps = DefaultReps
	}
	if opt.K <= 0 {
		opt.K = DefaultK
	}
	opt.K = min(opt.K, n-1)
	if opt.Level == 0 {
		opt.Level = DefaultLevel
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case opt.Reps < 2 || opt.Reps > MaxReps:
		return nil, fmt.Errorf("bootstrap: %d replicates outside 2..%d", opt.Reps, MaxReps)
	case !(opt.Level > 0 && opt.Level < 1):
		return nil, fmt.Errorf("bootstrap: level %g outside (0, 1)", opt.Level)
	case opt.Groups != nil && len(opt.Groups) != len(train):
		return nil, fmt.Errorf("bootstrap: %d groups for %d answers", len(opt.Groups), len(train))
	case len(train) == 0:
		return nil, fmt.Errorf("bootstrap: no answers")
	}
	fitOpt := opt.Fit
	fitOpt.Progress = nil
	if ref == nil {
		fitOpt.Init = nil
		res, err := embed.Fit(ctx, n, train, fitOpt)
		if err != nil {
			return nil, fmt.Errorf("bootstrap: reference fit: %w", err)
		}
		ref = res.X
	}
	if r, _ := ref.Dims(); r != n {
		return nil, fmt.Errorf("bootstrap: reference has %d rows for %d items", r, n)
	}
	_, d := ref.Dims()
	fitOpt.Dim = d
	if opt.Cold {
		fitOpt.Init = nil
	} else {
		fitOpt.Init = ref
		if fitOpt.MaxIter == 0 {
			fitOpt.MaxIter = DefaultMaxIter
		}
	}
	if opt.Workers > 1 {
		fitOpt.Workers = 1
	}
	refN := new(mat.Dense)
	embed.Normalize(refN, ref)
	groups := groupAnswers(opt.Groups, len(train))

	// The replicates are reduced in replicate order as they complete, so
	// the sums do not depend on the scheduling; at most 2·Workers are in
	// flight (fed, not yet reduced), so memory does not grow with Reps.
	acc := newAccumulator(refN, opt.K)
	pending := map[int]*mat.Dense{}
	next := 0
	slots := make(chan struct{}, 2*opt.Workers)
	errs := make([]float64, opt.Reps)
	iters := 0
	var (
		mu   sync.Mutex
		done int
	)
	admit := func(ctx context.Context) error {
		select {
		case slots <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := embed.RunFits(ctx, "bootstrap", opt.Workers, opt.Reps, admit, func(ctx context.Context, b int) error {
		seed := triplet.Mix64(opt.Fit.Seed ^ (uint64(b+1) * triplet.Golden))
		rng := triplet.NewRand(seed)
		sample := resample(rng, train, groups)
		o := fitOpt
		o.Seed = seed
		res, err := embed.Fit(ctx, n, sample, o)
		if err != nil {
			return fmt.Errorf("bootstrap: replicate %d: %w", b+1, err)
		}
		x := new(mat.Dense)
		embed.Normalize(x, res.X)
		Align(x, refN, x)
		errs[b] = math.NaN()
		if len(opt.Test) > 0 {
			errs[b] = embed.TripletError(x, resample(rng, opt.Test, nil))
		}
		mu.Lock()
		defer mu.Unlock()
		pending[b] = x
		for pending[next] != nil {
			acc.add(pending[next])
			delete(pending, next)
			next++
			<-slots
		}
		done++
		iters += res.Iterations
		if opt.Progress != nil {
			opt.Progress(done, opt.Reps)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := acc.result()
	out.RepErrors = errs
	out.Iterations = iters
	out.HeldoutError, out.ErrorLow, out.ErrorHigh = math.NaN(), math.NaN(), math.NaN()
	if len(opt.Test) > 0 {
		out.HeldoutError = embed.TripletError(ref, opt.Test)
		out.ErrorLow, out.ErrorHigh = CentredInterval(out.HeldoutError, errs, opt.Level)
	}
	return out, nil
}

// groupAnswers lists the answers of each group, groups in order of first
// appearance; nil groups make one group per answer.
func groupAnswers(g []int, m int) [][]int {
	if g == nil {
		return nil
	}
	index := map[int]int{}
	var out [][]int
	for i := range m {
		k, ok := index[g[i]]
		if !ok {
			k = len(out)
			index[g[i]] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// resample draws len(ts) answers with replacement, or, with groups, as
// many groups with replacement and all their answers.
func resample(rng interface{ IntN(int) int }, ts []triplet.Triplet, groups [][]int) []triplet.Triplet {
	if groups == nil {
		out := make([]triplet.Triplet, len(ts))
		for i := range out {
			out[i] = ts[rng.IntN(len(ts))]
		}
		return out
	}
	out := make([]triplet.Triplet, 0, len(ts))
	for range groups {
		for _, i := range groups[rng.IntN(len(groups))] {
			out = append(out, ts[i])
		}
	}
	return out
}

// accumulator reduces aligned replicates, added in replicate order, to the
// per-item spread and neighbour recurrence around the reference.
type accumulator struct {
	ref        *mat.Dense
	n, d, reps int
	sum        []float64 // n·d: Σ x_i
	cross      []float64 // n·d·d: Σ x_i x_iᵀ
	ss         []float64 // n: Σ ‖x_i − ref_i‖²
	neighbours [][]int
	hits       [][]int // per item, per reference neighbour: replicates where it recurs
	nb         []int
}

func newAccumulator(ref *mat.Dense, k int) *accumulator {
	n, d := ref.Dims()
	a := &accumulator{ref: ref, n: n, d: d, sum: make([]float64, n*d), cross: make([]float64, n*d*d),
		ss: make([]float64, n), neighbours: make([][]int, n), hits: make([][]int, n)}
	for i := range n {
		a.neighbours[i] = nearest(nil, ref, i, k)
		a.hits[i] = make([]int, len(a.neighbours[i]))
	}
	return a
}

func (a *accumulator) add(x *mat.Dense) {
	a.reps++
	d := a.d
	for i := range a.n {
		row := x.RawRowView(i)
		for c, v := range row {
			a.sum[i*d+c] += v
			dv := v - a.ref.At(i, c)
			a.ss[i] += dv * dv
			for c2, v2 := range row {
				a.cross[(i*d+c)*d+c2] += v * v2
			}
		}
		a.nb = nearest(a.nb, x, i, len(a.neighbours[i]))
		for r, j := range a.neighbours[i] {
			if slices.Contains(a.nb, j) {
				a.hits[i][r]++
			}
		}
	}
}

func (a *accumulator) result() *Result {
	n, d, b := a.n, a.d, float64(a.reps)
	out := &Result{Reference: a.ref, Reps: a.reps, Cov: make([]*mat.SymDense, n), RMS: make([]float64, n),
		Neighbours: a.neighbours, NeighbourFreq: make([][]float64, n), Stability: make([]float64, n)}
	for i := range n {
		out.RMS[i] = math.Sqrt(a.ss[i] / b)
		cov := mat.NewSymDense(d, nil)
		for c := range d {
			for c2 := c; c2 < d; c2++ {
				mc, mc2 := a.sum[i*d+c]/b, a.sum[i*d+c2]/b
				cov.SetSym(c, c2, (a.cross[(i*d+c)*d+c2]-b*mc*mc2)/(b-1))
			}
		}
		out.Cov[i] = cov
		freq := make([]float64, len(a.hits[i]))
		var s float64
		for r, h := range a.hits[i] {
			freq[r] = float64(h) / b
			s += freq[r]
		}
		out.NeighbourFreq[i] = freq
		if len(freq) > 0 {
			out.Stability[i] = s / float64(len(freq))
		}
	}
	return out
}

// CentredInterval returns the interval of an estimate e from its bootstrap
// replicates v: the percentile interval of v at level (Percentiles),
// shifted so that the replicates' median falls on e. A replicate's fit
// sees about 63.2% distinct answers (1 − 1/e; Efron 1983, "Estimating the
// error rate of a prediction rule", JASA 78) and so errs more than the
// reference fit: the replicates measure the held-out error's spread (over
// training answers and over test answers, both resampled), not its level.
func CentredInterval(e float64, v []float64, level float64) (lo, hi float64) {
	lo, hi = embed.Percentiles(v, level)
	s := embed.SortedNumbers(v)
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	med := embed.Quantile(s, 0.5)
	return e + lo - med, e + hi - med
}

// nearest is triplet.Nearest (the k rows nearest to row i, nearest first,
// ties towards the lower index) by insertion into the k best so far:
// O(n·k) instead of a sort of all n, which took a seventh of the time of
// 100 replicates of 300 items (docs/reproductions.md, issue 28).
func nearest(dst []int, x *mat.Dense, i, k int) []int {
	n, _ := x.Dims()
	k = min(k, n-1)
	dst = dst[:0]
	ds := make([]float64, 0, k)
	for j := range n {
		if j == i {
			continue
		}
		d := triplet.SqDist(x, i, j)
		if len(dst) == k && d >= ds[k-1] {
			continue // j > every index kept, so a tie keeps the kept one
		}
		p := len(dst)
		if p == k {
			p--
		} else {
			dst = append(dst, 0)
			ds = append(ds, 0)
		}
		for p > 0 && ds[p-1] > d {
			dst[p], ds[p] = dst[p-1], ds[p-1]
			p--
		}
		dst[p], ds[p] = j, d
	}
	return dst
}
