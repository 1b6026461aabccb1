package embed

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/triplet"
)

var (
	perf     = flag.Bool("perf", false, "run the speed checks of docs/embeddings.md (timings are logged, never asserted)")
	perfData = flag.String("perfdata", "", "write the speed-check triplet files (CSV) into this directory")
)

// perfProblem is the speed setting of the issue: n points from N(0, I) in
// 2-D and m noise-free random triplets.
func perfProblem(n, m int) []triplet.Triplet {
	rng := triplet.NewRand(42)
	x := triplet.Gaussian(rng, n, 2, 1)
	return triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, 42), m)
}

// TestWritePerfData writes the triplet files used by the CLI speed runs:
//
//	go test ./internal/embed -run TestWritePerfData -perfdata /tmp/perf
func TestWritePerfData(t *testing.T) {
	t.Parallel()
	if *perfData == "" {
		t.Skip("run with -perfdata DIR")
	}
	for _, c := range []struct {
		name string
		n, m int
	}{{"n1000-m330k.csv", 1000, 330000}, {"n10000-m1M.csv", 10000, 1000000}, {"n400-m20k.csv", 400, 20000}} {
		f, err := os.Create(filepath.Join(*perfData, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := triplet.WriteCSV(f, nil, perfProblem(c.n, c.m)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The DMOE Table 1 setting with 10,000 training triplets (data seed 1)
	// and its test set.
	train, test := table1Data(1, 10000)
	for name, ts := range map[string][]triplet.Triplet{"table1-train-m10k.csv": train, "table1-test-m10k.csv": test} {
		f, err := os.Create(filepath.Join(*perfData, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := triplet.WriteCSV(f, nil, ts); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpeed fits every method on n = 1,000 items with 330,000 triplets in
// 2-D, once with the defaults and once with 10× the iterations (and a
// tolerance 1,000× tighter), and logs wall time and training error:
//
//	go test ./internal/embed -run TestSpeed -perf -v
func TestSpeed(t *testing.T) {
	t.Parallel()
	if !*perf {
		t.Skip("run with -perf")
	}
	ts := perfProblem(1000, 330000)
	for _, meth := range speedMethods() {
		opt := Options{Params: oneStart(meth), Dim: 2, Seed: 1}
		start := time.Now()
		res, err := Fit(context.Background(), 1000, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)
		d := opt.withDefaults()
		opt.MaxIter, opt.Tol = 10*d.MaxIter, d.Tol/1000
		start = time.Now()
		long, err := Fit(context.Background(), 1000, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("| %s | %.2f s | %d / %d | %.4f | %.2f s | %d | %.4f |", meth, wall.Seconds(), res.Iterations, res.Evaluations, TripletError(res.X, ts),
			time.Since(start).Seconds(), long.Iterations, TripletError(long.X, ts))
	}
}

var perfMethods = flag.String("perfmethods", "tste,ste,gnmds,ckl,soe", "methods of TestSpeed")

func speedMethods() []Method {
	var ms []Method
	for _, s := range strings.Split(*perfMethods, ",") {
		m, err := ParseMethod(s)
		if err != nil {
			panic(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// BenchmarkLoss times one loss-and-gradient evaluation per method on the
// speed setting (n = 1,000, 330,000 triplets, 2-D):
//
//	go test ./internal/embed -run '^$' -bench Loss
func BenchmarkLoss(b *testing.B) {
	n, m := benchSize()
	ts := perfProblem(n, m)
	tr := flatten(ts)
	x := randomStart(n, 2, 1, 1)
	g := make([]float64, len(x))
	for _, meth := range []Method{TSTE, STE, GNMDS, CKL, SOE} {
		f, lambda := chunkFor(Options{Method: meth, Dim: 2}.withDefaults())
		ev := newEvaluator(n, 2, tr, f, lambda, 0)
		ev.workers = 2
		b.Run(string(meth), func(b *testing.B) {
			for b.Loop() {
				ev.eval(x, g)
			}
		})
	}
}

// BenchmarkFit times a whole default fit on the speed setting.
//
//	go test ./internal/embed -run '^$' -bench Fit -benchtime 3x
func BenchmarkFit(b *testing.B) {
	n, m := benchSize()
	ts := perfProblem(n, m)
	for _, meth := range []Method{TSTE, STE, GNMDS, CKL, SOE} {
		b.Run(string(meth), func(b *testing.B) {
			for b.Loop() {
				if _, err := Fit(context.Background(), n, ts, Options{Params: oneStart(meth), Dim: 2, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchSize is the benchmarks' problem: the speed setting (1000 points,
// 330,000 triplets), or under -short (make bench-smoke, -benchtime 1x) the
// same code on 200 points and 20,000 triplets: one run of BenchmarkFit's
// five fits at full size takes ~34 s.
func benchSize() (n, m int) {
	if testing.Short() {
		return 200, 20000
	}
	return 1000, 330000
}

// oneStart returns meth's default parameters with a single start, so SOE's
// timing is that of one fit like the other methods'.
func oneStart(meth Method) Params {
	if meth == SOE {
		return SOEParams{Inits: 1}
	}
	return meth.Params()
}
