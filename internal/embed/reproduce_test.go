package embed

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

var (
	reproduce    = flag.Bool("reproduce", false, "run the slow reproductions (DMOE Table 1)")
	repSeeds     = flag.Int("seeds", 10, "seeds per cell of the Table 1 reproduction")
	repMeth      = flag.String("methods", "gnmds,ste,tste,dmoe", "methods of the Table 1 reproduction")
	repSizes     = flag.String("sizes", "200,1000,10000", "training-set sizes of the Table 1 reproduction")
	repScale     = flag.Float64("initscale", 0, "initial scale (0: the default)")
	repLambda    = flag.Float64("lambda", 0, "lambda (0: the default)")
	repIter      = flag.Int("maxiter", 0, "iteration cap (0: the default)")
	repTol       = flag.Float64("tol", 0, "tolerance (0: the default)")
	repNu        = flag.Float64("nu", 0, "DMOE nu (0: the default)")
	repDim       = flag.Int("dim", 10, "embedding dimension of the Table 1 reproduction (diagnostic; 100 scores DMOE's whole Gram matrix)")
	repStart     = flag.String("start", "", "start of the fits without a warm start (random or mds; empty: the default, random)")
	repPaperStop = flag.Bool("paperstop", true, "run DMOE with Ma et al.'s stopping rule (DMOEParams.PaperStop), as the paper does")
	repLeak      = flag.Bool("datastart", false, "diagnostic, leaks the truth: start the point methods at initscale × the standard normals the data were drawn from")
)

// table1Data is the synthetic setting of Ma et al. 2019, "Simulation": 100
// points in R^10 from N(0, I/20), m distinct random questions answered
// without noise as the training set ("we randomly sample |T| triplets as
// the training set and the test set is the rest of all triplets"), and
// every other question (a; j, k), answered without noise, as the test set.
// The questions are drawn uniformly and a repeat is redrawn, so the
// training set holds exactly m questions (with replacement, m = 10,000
// would repeat about 100 of them).
func table1Data(seed uint64, m int) (train, test []triplet.Triplet) {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, 100, 10, 1/math.Sqrt(20))
	o := triplet.NewOracle(x, 0, seed)
	seen := map[triplet.Key]bool{}
	for len(train) < m {
		a, i, j := triplet.RandomQuestion(rng, 100)
		t := o.Answer(a, i, j)
		if k := triplet.KeyOf(t); !seen[k] {
			seen[k] = true
			train = append(train, t)
		}
	}
	for _, t := range triplet.AllTriplets(x) {
		if !seen[triplet.KeyOf(t)] {
			test = append(test, t)
		}
	}
	return train, test
}

// table1Points returns the true points of table1Data(seed, ·), the same
// draw (TestTable1Data checks every answer against them).
func table1Points(seed uint64) *mat.Dense {
	return triplet.Gaussian(triplet.NewRand(seed), 100, 10, 1/math.Sqrt(20))
}

// paperCell is one cell of Table 1 of Ma et al. 2019: the held-out error
// over the paper's runs.
type paperCell struct{ min, median, max, std float64 }

// paperTable1 is Table 1 of Ma et al. 2019 as printed
// (shared/papers/ma-et-al-2019-dmoe-distributional-margin.txt, "Table 1:
// Performance Comparison on synthetic dataset"), columns m = 200, 1,000 and
// 10,000 training triplets; the baselines are the paper's GNMDS-p, STE-p and
// TSTE-p. (van der Maaten and Weinberger 2012, the t-STE paper, has no table
// on this setting; Ma et al.'s Table 1 is where t-STE's figures stand.)
var paperTable1 = map[Method][3]paperCell{
	GNMDS: {{.419, .447, .476, .016}, {.318, .341, .359, .009}, {.143, .147, .154, .007}},
	STE:   {{.397, .426, .461, .016}, {.375, .385, .401, .007}, {.219, .234, .251, .007}},
	TSTE:  {{.440, .468, .498, .014}, {.426, .441, .466, .011}, {.238, .257, .271, .011}},
	DMOE:  {{.372, .390, .410, .011}, {.281, .298, .305, .008}, {.142, .146, .151, .008}},
}

// table1Bar is the bar of the issue for our medians: for the baselines the
// plain L-BFGS medians quoted in the issue + 0.02, for DMOE the paper's
// median + 0.02.
var table1Bar = map[Method][3]float64{
	GNMDS: {.378 + .02, .251 + .02, .050 + .02},
	STE:   {.402 + .02, .268 + .02, .052 + .02},
	TSTE:  {.425 + .02, .291 + .02, .068 + .02},
	DMOE:  {.390 + .02, .298 + .02, .146 + .02},
}

// TestReproduceTable1 regenerates Ma et al. 2019 Table 1 (held-out triplet
// error, 10 dimensions) and fails if a median misses the bar:
//
//	go test ./internal/embed -run TestReproduceTable1 -reproduce -v -timeout 60m
func TestReproduceTable1(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	var sizes []int
	for _, s := range strings.Split(*repSizes, ",") {
		var m int
		if _, err := fmt.Sscan(s, &m); err != nil {
			t.Fatalf("-sizes %q: %v", *repSizes, err)
		}
		sizes = append(sizes, m)
	}
	var methods []Method
	for _, s := range strings.Split(*repMeth, ",") {
		m, err := ParseMethod(s)
		if err != nil {
			t.Fatal(err)
		}
		methods = append(methods, m)
	}
	for si, m := range sizes {
		data := make([][2][]triplet.Triplet, *repSeeds)
		for s := range data {
			data[s][0], data[s][1] = table1Data(uint64(s+1), m)
		}
		for _, meth := range methods {
			dims := []int{*repDim}
			if meth == DMOE && *repDim == 10 {
				// Ma et al. stop by their rule (-paperstop, the default
				// here) and score "the learned Gram matrix G" (Evaluation
				// Metrics); Fit returns Dim eigenpairs of G, all of them at
				// Dim = n. The bar applies to that row; the 10 leading
				// eigenpairs (a 10-dimensional embedding) are reported too.
				dims = []int{100, 10}
			}
			for _, dim := range dims {
				errs := make([]float64, *repSeeds)
				start := time.Now()
				for s := range data {
					opt := Options{Params: paramsWith(meth, *repLambda, *repNu, *repPaperStop), Dim: dim, Seed: uint64(1000 + s), InitScale: *repScale, MaxIter: *repIter, Tol: *repTol, Start: Start(*repStart)}
					if *repLeak && meth != DMOE && dim == 10 {
						// The start a script gets when it seeds the generator of
						// its start as it seeded the data's: the data's standard
						// normals (√20 × the points) times the initial scale.
						opt.Init = table1Points(uint64(s + 1))
						opt.Init.Scale(math.Sqrt(20)*opt.withDefaults().InitScale, opt.Init)
					}
					res, err := Fit(context.Background(), 100, data[s][0], opt)
					if err != nil {
						t.Fatal(err)
					}
					errs[s] = TripletError(res.X, data[s][1])
				}
				slices.Sort(errs)
				med := median(errs)
				name := string(meth)
				barred := len(dims) == 1 && dim == 10 || len(dims) == 2 && dim == 100
				if meth == DMOE && len(dims) == 2 {
					name = map[int]string{100: "dmoe (G)", 10: "dmoe (top 10)"}[dim]
				}
				pm, bar := "-", "-"
				if v, ok := paperTable1[meth]; ok && si < 3 && barred {
					pm = fmt.Sprintf("%.3f", v[si].median)
					bar = fmt.Sprintf("%.3f", table1Bar[meth][si])
				}
				t.Logf("| %d | %s | %.3f | %.3f | %.3f | %s | %s | %.1f s/run |", m, name, errs[0], med, errs[len(errs)-1], pm, bar, time.Since(start).Seconds()/float64(len(errs)))
				if b, ok := table1Bar[meth]; ok && barred && bar != "-" && sizes[si] == []int{200, 1000, 10000}[si] && med > b[si] {
					t.Errorf("%s with %d triplets: median held-out error %.3f above the bar %.3f", name, m, med, b[si])
				}
			}
		}
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// TestTable1Smoke is a fast guard for the reproduction: one data set of the
// Table 1 setting (data seed 3, fit seed 1002, one of the reproduction's ten
// runs) with 1,000 training triplets, the paper's column (b), each method
// run as TestReproduceTable1 runs it: the point methods in 10 dimensions,
// DMOE by the paper's protocol (its stopping rule, the whole Gram matrix
// scored), since that is what the paper's DMOE figure measures.
//
// The bars come from the paper and from an independent method, never from
// our own fits:
//
//   - Upper: the paper's median + 3 × the paper's standard deviation of that
//     cell (paperTable1). Our training set has the paper's size, so what
//     separates one run from the paper's median is the spread over data sets
//     and seeds, which the paper's std measures: one run lies above
//     median + 3σ with probability 0.13 % for a normal spread, and the bar is
//     above the paper's own worst run in every row (GNMDS .368 > .359, STE
//     .406 > .401, t-STE .474 > .466, DMOE .322 > .305). Our GNMDS, STE and
//     t-STE fits are better than the paper's GNMDS-p/STE-p/TSTE-p (a
//     projected gradient on the Gram matrix), so for them this bar catches
//     gross failures only (a fit that learned nothing errs on about half);
//     the gradient checks and TestMethodsRecover catch the finer ones.
//   - Lower: the Bayes-optimal held-out error of this data set, 0.269,
//     estimated by posterior sampling (TestTable1BayesBound, data seed 3,
//     m = 1,000, 20,000 test triplets, standard error ±0.003; the two chains
//     alone 0.271), − 0.03 (10 standard errors, room for the luck of one
//     data set). A fit that sees only the training triplets cannot beat that
//     predictor on average; one far below it has seen the truth (a DMOE start
//     that drew the data's own normals once gave 0.065 at m = 200).
func TestTable1Smoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	const col = 1       // paperTable1 column: m = 1,000
	const bayes = 0.269 // TestTable1BayesBound, data seed 3, m = 1,000
	train, test := table1Data(3, 1000)
	for _, meth := range []Method{GNMDS, STE, TSTE, DMOE} {
		opt := Options{Method: meth, Dim: 10, Seed: 1002}
		if meth == DMOE {
			opt.Dim, opt.Params = 100, DMOEParams{PaperStop: true}
		}
		res, err := Fit(context.Background(), 100, train, opt)
		if err != nil {
			t.Fatal(err)
		}
		e := TripletError(res.X, test)
		c := paperTable1[meth][col]
		hi, lo := c.median+3*c.std, bayes-0.03
		t.Logf("%s: %.3f (paper median %.3f, bar %.3f; lower bar %.3f)", meth, e, c.median, hi, lo)
		if e > hi {
			t.Errorf("%s: held-out error %.3f above the paper's median %.3f + 3σ = %.3f", meth, e, c.median, hi)
		}
		if e < lo {
			t.Errorf("%s: held-out error %.3f below the Bayes-optimal %.3f − 0.03: the fit has seen more than the training triplets", meth, e, bayes)
		}
	}
}

// TestTable1Data checks the protocol of the reproduction: m distinct
// training questions answered by the truth, and as the test set every other
// question exactly once, answered by the truth (100·C(99, 2) = 485,100
// questions in all).
func TestTable1Data(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	const m = 1000
	train, test := table1Data(1, m)
	x := table1Points(1)
	seen := map[triplet.Key]bool{}
	for _, ts := range [][]triplet.Triplet{train, test} {
		for _, tr := range ts {
			k := triplet.KeyOf(tr)
			if seen[k] {
				t.Fatalf("question %v appears twice", k)
			}
			seen[k] = true
			if triplet.Truth(x, tr.Anchor, tr.Closer, tr.Farther) != tr {
				t.Fatalf("triplet %v is not the true answer", tr)
			}
		}
	}
	if len(train) != m || len(seen) != 100*99*98/2 {
		t.Errorf("%d training and %d questions in all, want %d and %d", len(train), len(seen), m, 100*99*98/2)
	}
	if e := TripletError(x, test); e != 0 {
		t.Errorf("the true points miss %.4f of the test set", e)
	}
}

// paramsWith returns m's parameters with the regulariser weight λ (where m
// has one), and DMOE's ν and paper stop; zero values keep the defaults. The
// reproduction's flags set these for every method at once.
func paramsWith(m Method, lambda, nu float64, paperStop bool) Params {
	switch m {
	case TSTE:
		return TSTEParams{Lambda: lambda}
	case STE:
		return STEParams{Lambda: lambda}
	case GNMDS:
		return GNMDSParams{Lambda: lambda}
	case CKL:
		return CKLParams{Lambda: lambda}
	case DMOE:
		return DMOEParams{Lambda: lambda, Nu: nu, PaperStop: paperStop}
	}
	return m.Params()
}
