package projection

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// Sizes returns k answer counts spaced evenly on a log scale from
// m/ratio to m (rounded, distinct, increasing): the points of a learning
// curve over the first m answers.
func Sizes(m, k int, ratio float64) []int {
	var out []int
	for i := range k {
		s := int(math.Round(float64(m) / math.Pow(ratio, float64(k-1-i)/float64(k-1))))
		if s >= 1 && (len(out) == 0 || s > out[len(out)-1]) {
			out = append(out, s)
		}
	}
	return out
}

// Measure returns the learning curve of the answers train in the order
// given (the order they were collected in): for each size s, the error on
// test of a fit (fit's options, from its default start) of the first s
// answers. The fits run on up to workers goroutines (0: GOMAXPROCS), each
// seeded from fit.Seed and its size, so the curve does not depend on
// workers.
func Measure(ctx context.Context, n int, train, test []triplet.Triplet, sizes []int, fit embed.Options, workers int) ([]Point, error) {
	if len(test) == 0 {
		return nil, fmt.Errorf("learning curve: no held-out answers")
	}
	for _, s := range sizes {
		if s < 1 || s > len(train) {
			return nil, fmt.Errorf("learning curve: size %d outside 1..%d", s, len(train))
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fit.Init, fit.Progress = nil, nil
	if workers > 1 {
		fit.Workers = 1 // the sizes are the parallelism
	}
	out := make([]Point, len(sizes))
	err := embed.RunFits(ctx, "learning curve", workers, len(sizes), nil, func(ctx context.Context, i int) error {
		s := sizes[i]
		o := fit
		o.Seed = triplet.Mix64(fit.Seed ^ uint64(s))
		res, err := embed.Fit(ctx, n, train[:s], o)
		if err != nil {
			return fmt.Errorf("learning curve: %d answers: %w", s, err)
		}
		out[i] = Point{Answers: s, Error: embed.TripletError(res.X, test)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
