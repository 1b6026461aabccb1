// Package dimension chooses the dimension of an ordinal embedding by
// k-fold cross-validation: it fits d = 1..MaxDim on all folds but one,
// measures the triplet error on the fold left out, and suggests the
// smallest d whose mean held-out error is within one standard error of
// the best (the one-standard-error rule of Hastie, Tibshirani and
// Friedman, The Elements of Statistical Learning, 2nd ed., sec. 7.10,
// "Cross-Validation", p. 244).
//
// A higher dimension never fits the training answers worse, but past the
// true dimension it fits their noise and predicts unseen answers no
// better; the rule prefers the simpler embedding when the data cannot
// tell the two apart.
package dimension

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// DefaultMethod is the method of the folds' fits when Options.Fit names
// none: STE. Its Gaussian kernel is the same in every dimension, while
// t-STE's degrees of freedom grow with it (α = d − 1), so t-STE's held-out
// error also changes with the kernel's tails: on 2-D data with 10% wrong
// answers it chose 3-D in 3 of 10 seeds, STE in none
// (docs/reproductions.md, issue 28). The chosen dimension can then be
// fitted with any method.
const DefaultMethod = embed.STE

// Defaults of Options.
const (
	DefaultMaxDim = 5
	DefaultFolds  = 5
	// MaxFolds bounds Options.Folds: each fold costs MaxDim fits.
	MaxFolds = 20
	// MaxMaxDim bounds Options.MaxDim.
	MaxMaxDim = 20
)

// Options configure CrossValidate. Zero values take the defaults.
type Options struct {
	// Fit is the fit of every fold (method, parameters, seed, iterations,
	// starts; a zero Method and Params mean DefaultMethod); its Dim and
	// Init are ignored, its Workers replaced by 1
	// when folds run in parallel. Each fold's fit is seeded from Fit.Seed,
	// the dimension and the fold.
	Fit embed.Options
	// MaxDim is the largest dimension tried (default DefaultMaxDim).
	MaxDim int
	// Folds is the number of folds k (default DefaultFolds, at least 2).
	Folds int
	// Workers bounds the fits run at once (default GOMAXPROCS). The result
	// does not depend on it.
	Workers int
	// Progress, when set, is called after each fit (from the goroutine
	// that ran it, under a lock) with the number of fits done and the
	// total.
	Progress func(done, total int)
}

// Row is one dimension's cross-validated error.
type Row struct {
	Dim int
	// Errors are the held-out triplet errors of the folds, in fold order.
	Errors []float64
	// Mean is their mean, SE its standard error: the standard deviation
	// of the fold errors over √k (ESL eq. 7.48's CV curve and its
	// standard-error bars).
	Mean, SE float64
	// Train is the mean training error of the folds' fits.
	Train float64
}

// Result is a cross-validation over dimensions.
type Result struct {
	Rows []Row // d = 1..MaxDim
	// Best is the dimension of the lowest mean held-out error, Suggested
	// the smallest within one standard error of it (OneSE).
	Best, Suggested int
	Folds           int
	Answers         int
}

// CrossValidate fits the triplets ts over n items in every dimension
// 1..MaxDim on k − 1 folds and scores each fit on the fold left out. The
// folds are a seeded shuffle of ts (answer k·j + f of the shuffle in fold
// f), the same for every dimension, so the dimensions are compared on the
// same splits. The result depends on ts and the options only, never on
// Workers or the scheduling. A cancelled ctx stops it with ctx.Err()
// wrapped.
func CrossValidate(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	if opt.MaxDim == 0 {
		opt.MaxDim = DefaultMaxDim
	}
	if opt.Folds == 0 {
		opt.Folds = DefaultFolds
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case opt.MaxDim < 1 || opt.MaxDim > MaxMaxDim:
		return nil, fmt.Errorf("dimension cv: max dimension %d outside 1..%d", opt.MaxDim, MaxMaxDim)
	case opt.Folds < 2 || opt.Folds > MaxFolds:
		return nil, fmt.Errorf("dimension cv: %d folds outside 2..%d", opt.Folds, MaxFolds)
	case len(ts) < opt.Folds:
		return nil, fmt.Errorf("dimension cv: %d answers for %d folds", len(ts), opt.Folds)
	}
	folds := Folds(len(ts), opt.Folds, opt.Fit.Seed)
	test := make([][]float64, opt.MaxDim)
	train := make([][]float64, opt.MaxDim)
	for d := range test {
		test[d] = make([]float64, opt.Folds)
		train[d] = make([]float64, opt.Folds)
	}
	var (
		mu   sync.Mutex
		done int
	)
	total := opt.MaxDim * opt.Folds
	fitOpt := opt.Fit
	if fitOpt.Method == "" && fitOpt.Params == nil {
		fitOpt.Method = DefaultMethod
	}
	if opt.Workers > 1 {
		fitOpt.Workers = 1 // the folds are the parallelism
	}
	fitOpt.Init = nil
	fitOpt.Progress = nil
	// Fit k is dimension k/Folds + 1 on all folds but k%Folds.
	err := embed.RunFits(ctx, "dimension cv", opt.Workers, total, nil, func(ctx context.Context, k int) error {
		d, f := k/opt.Folds, k%opt.Folds
		tr, te := split(ts, folds, f)
		o := fitOpt
		o.Dim = d + 1
		o.Seed = triplet.Mix64(opt.Fit.Seed ^ uint64(d+1)<<32 ^ uint64(f+1))
		res, err := embed.Fit(ctx, n, tr, o)
		if err != nil {
			return fmt.Errorf("dimension cv: d = %d, fold %d: %w", d+1, f+1, err)
		}
		mu.Lock()
		defer mu.Unlock()
		test[d][f] = embed.TripletError(res.X, te)
		train[d][f] = embed.TripletError(res.X, tr)
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &Result{Folds: opt.Folds, Answers: len(ts)}
	for d := range opt.MaxDim {
		m, se := MeanSE(test[d])
		tm, _ := MeanSE(train[d])
		out.Rows = append(out.Rows, Row{Dim: d + 1, Errors: test[d], Mean: m, SE: se, Train: tm})
	}
	out.Best, out.Suggested = OneSE(out.Rows)
	return out, nil
}

// Folds assigns each of m answers to one of k folds: a seeded shuffle,
// position p of the shuffle in fold p mod k, so the folds differ in size
// by at most one.
func Folds(m, k int, seed uint64) []int {
	perm := triplet.NewRand(triplet.Mix64(seed ^ 0x666f6c6473)).Perm(m) // "folds"
	fold := make([]int, m)
	for p, i := range perm {
		fold[i] = p % k
	}
	return fold
}

func split(ts []triplet.Triplet, folds []int, f int) (train, test []triplet.Triplet) {
	for i, t := range ts {
		if folds[i] == f {
			test = append(test, t)
		} else {
			train = append(train, t)
		}
	}
	return train, test
}

// MeanSE returns the mean of v and its standard error, the sample standard
// deviation (n − 1 in the denominator) over √n; the standard error is NaN
// for fewer than two values.
func MeanSE(v []float64) (mean, se float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(v)-1)) / math.Sqrt(float64(len(v)))
}

// OneSE applies the one-standard-error rule (ESL sec. 7.10, p. 244) to
// rows of increasing complexity: best is the Dim of the lowest Mean (the
// first on a tie), suggested the smallest Dim whose Mean is at most the
// best's Mean plus the best's SE. Both are 0 for no rows.
func OneSE(rows []Row) (best, suggested int) {
	if len(rows) == 0 {
		return 0, 0
	}
	b := 0
	for i, r := range rows {
		if r.Mean < rows[b].Mean {
			b = i
		}
	}
	bound := rows[b].Mean
	if se := rows[b].SE; se > 0 {
		bound += se
	}
	for _, r := range rows {
		if r.Mean <= bound {
			return rows[b].Dim, r.Dim
		}
	}
	return rows[b].Dim, rows[b].Dim
}
