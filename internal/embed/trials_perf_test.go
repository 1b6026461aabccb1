package embed

import (
	"context"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestPerfThingsOddOneOut is the THINGS-scale fit of issue 27: 1.5 million
// noise-free random odd-one-out trials over 1,854 items (THINGS' number of
// objects) drawn from N(0, I) in 10-D, fitted natively in 10 dimensions
// from one random start (n > 1,500: no MDS start) with t-STE's defaults
// otherwise. It logs the time, the iterations, the peak heap and the
// accuracy on 10,000 fresh trials; it asserts no time (run with -perf):
//
//	go test ./internal/embed -run TestPerfThingsOddOneOut -perf -v -timeout 30m
func TestPerfThingsOddOneOut(t *testing.T) { //nolint:paralleltest // measures the heap and the time of one fit, so runs alone
	if !*perf {
		t.Skip("speed check: run with -perf")
	}
	const n, d, m = 1854, 10, 1500000
	rng := triplet.NewRand(27)
	truth := triplet.Gaussian(rng, n, d, 1)
	ts := randomOdd(rng, truth, m+10000)
	train, test := ts[:m], ts[m:]
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapAlloc
	done := make(chan struct{})
	go func() { // sample the heap while the fit runs
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
	}()
	start := time.Now()
	res, err := FitOddOneOut(context.Background(), n, train, Options{Dim: d, Seed: 1, Starts: 1})
	elapsed := time.Since(start)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	var z mat.Dense
	Normalize(&z, res.X)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d trials, %d items, %d-D: %.1f s, %d iterations, %d evaluations, loss %.5g; heap before the fit %.0f MB, peak sampled %.0f MB, Sys %.0f MB; GOMAXPROCS %d; held-out accuracy %.4f",
		m, n, d, elapsed.Seconds(), res.Iterations, res.Evaluations, res.Loss, float64(before.HeapAlloc)/1e6, float64(peak)/1e6, float64(ms.Sys)/1e6,
		runtime.GOMAXPROCS(0), OddOneOutAccuracy(&z, test))
}
