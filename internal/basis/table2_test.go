package basis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// The Table 2 data sets of Anderton et al. (500 points). The paper says
// only "random draws of 500 points from Gaussian mixtures and the unit
// cube"; for the mixtures we use triplet.GaussianMixture with 5 unit-variance
// clusters whose centres lie at distance 2 from the origin (overlapping
// clusters; the paper's d̂ = 3 on both mixtures rules out widely separated
// ones, see TestReproduceMixtureVariants and docs/basis.md).
var table2Sets = []struct {
	name                string
	d                   int
	gen                 func(seed uint64) *mat.Dense
	cmps, tau, knn      float64    // paper, Table 2, row "Basis"
	extraTau            float64    // paper, row "Extra+SOE"
	rmse                [3]float64 // paper, rmse of Basis, Basis+SOE, Extra+SOE
	soeTau, soeKNN      float64    // paper, row "Basis+SOE"
	extraCmps, extraKNN float64    // paper, row "Extra+SOE"
}{
	{"3dgmm", 3, func(seed uint64) *mat.Dense { return gmm(seed, 3) }, 38000, 0.71, 0.64, 0.99, [3]float64{0.77, 0.02, 0.01}, 0.99, 0.97, 61000, 0.99},
	{"5dgmm", 5, func(seed uint64) *mat.Dense { return gmm(seed, 5) }, 39000, 0.68, 0.60, 0.98, [3]float64{0.90, 0.14, 0.04}, 0.94, 0.66, 62000, 0.97},
	{"5dcube", 5, func(seed uint64) *mat.Dense { return triplet.UniformCube(triplet.NewRand(seed), 500, 5) }, 39000, 0.49, 0.40, 0.94, [3]float64{0.26, 0.05, 0.03}, 0.88, 0.73, 61000, 0.92},
}

func gmm(seed uint64, d int) *mat.Dense {
	x, _ := triplet.GaussianMixture(triplet.NewRand(seed), 500, d, 5, 2)
	return x
}

type table2Row struct {
	dHat, cmps, answers, tau, knn             float64
	soeTau, soeKNN                            float64 // Basis+SOE
	soeDTau, extraDTau                        float64 // tau of the SOE fit in d̂ dimensions alone
	extraCmps, extraTau, extraKNN             float64 // Extra+SOE
	fallback, maxPer, rejected, fallbackSteps float64
	// distance RMSE of Basis, Basis+SOE, Extra+SOE, and of the true points
	// in a random order (an embedding with no information, for scale)
	rmse, soeRMSE, extraRMSE, permRMSE float64
}

// table2 runs the basis scheme with the coordinate rule (and, with fit, SOE
// on its triplets and on those of Basis+Extra) runs times per data set and
// returns the means and, per set, the rows of the single runs.
func table2(t *testing.T, rule string, runs int, p float64, repeats, annotators int, fit bool) ([]table2Row, [][]table2Row) {
	t.Helper()
	rows := make([]table2Row, len(table2Sets))
	each := make([][]table2Row, len(table2Sets))
	same := make([][]table2Row, len(table2Sets)) // runs with d̂ = 3
	var mu sync.Mutex
	parallel(len(table2Sets)*runs, func(i int) {
		si, r := i/runs, i%runs
		set := table2Sets[si]
		seed := uint64(r + 1)
		x := set.gen(seed)
		k := embed.DefaultK(500)
		var row table2Row

		s := New(500, Config{Seed: seed, Repeats: repeats, Coordinates: rule})
		st := Run(s, triplet.NewOracle(x, p, seed), annotators, 0)
		c := s.Coordinates()
		row.dHat = float64(s.DHat())
		row.cmps = float64(len(s.Triplets()))
		row.answers = float64(st.Answers)
		row.tau = embed.MeanKendallTau(x, c)
		row.knn = embed.KNNPrecision(x, c, k)
		row.rmse = embed.DistanceRMSE(x, c)
		row.permRMSE = embed.DistanceRMSE(x, permuted(x, seed))
		row.fallback = st.FallbackShare()
		row.fallbackSteps = float64(st.FallbackSteps) / float64(st.Steps)
		row.maxPer = float64(st.MaxPerComparison)
		row.rejected = float64(st.Rejected)
		if fit {
			res, first := soe(s.Triplets(), s.DHat(), seed, c)
			row.soeDTau = embed.MeanKendallTau(x, first.X)
			row.soeTau = embed.MeanKendallTau(x, res.X)
			row.soeKNN = embed.KNNPrecision(x, res.X, k)
			row.soeRMSE = embed.DistanceRMSE(x, res.X)

			e := New(500, Config{Seed: seed, Repeats: repeats, Extra: true, Coordinates: rule})
			Run(e, triplet.NewOracle(x, p, seed), annotators, 0)
			row.extraCmps = float64(len(e.Triplets()))
			res, first = soe(e.Triplets(), e.DHat(), seed, e.Coordinates())
			row.extraDTau = embed.MeanKendallTau(x, first.X)
			row.extraTau = embed.MeanKendallTau(x, res.X)
			row.extraKNN = embed.KNNPrecision(x, res.X, k)
			row.extraRMSE = embed.DistanceRMSE(x, res.X)
		}
		mu.Lock()
		rows[si].add(row, 1/float64(runs))
		rows[si].maxPer = max(rows[si].maxPer, row.maxPer)
		each[si] = append(each[si], row)
		if row.dHat == 3 { // the paper's d̂ on all three sets
			same[si] = append(same[si], row)
		}
		mu.Unlock()
	})
	for si, rs := range same {
		t.Logf("%s, %s coordinates: %d of %d runs found the paper's d̂ = 3; their means:", table2Sets[si].name, rule, len(rs), runs)
		var m table2Row
		for _, r := range rs {
			m.add(r, 1/float64(len(rs)))
		}
		logTable2Row(t, si, m)
	}
	return rows, each
}

// figure is one metric of a table2Row with the paper's value and whether
// higher is better.
type figure struct {
	name   string
	get    func(table2Row) float64
	paper  float64
	higher bool
}

// paperRounding is half the last digit of the paper's Table 2 figures
// (printed to two decimals).
const paperRounding = 0.005

// checkAgainstPaper checks figures of a row the paper reports from one run
// against our runs: the best of our runs must be at least as good as the
// paper's figure (up to its rounding). Why the best: if our runs and the
// paper's came from the same distribution, its one run would beat all m
// of ours with probability 1/(m+1) (1/11 for 10 runs, whatever the
// distribution), so a paper figure beyond all of ours says we do not
// reproduce it. The distribution matters here: the SOE figures are
// bounded by 1 and skewed by the occasional fit that finds no good
// optimum (sd up to 0.17 over 10 runs), so a normal-theory interval
// would reach past 1 and check nothing. A systematic loss (every run
// worse) fails; one unlucky run does not.
func checkAgainstPaper(t *testing.T, set string, runs []table2Row, figs []figure) {
	t.Helper()
	for _, f := range figs {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			vals[i] = f.get(r)
		}
		best := slices.Min(vals)
		if f.higher {
			best = slices.Max(vals)
		}
		t.Logf("%-7s %-11s mean %6.3f, sd %5.3f, best of %d runs %6.3f, paper %.2f", set, f.name, stat.Mean(vals, nil), stat.StdDev(vals, nil), len(vals), best, f.paper)
		if f.higher && best < f.paper-paperRounding {
			t.Errorf("%s %s: best of %d runs %.3f below the paper's %.2f", set, f.name, len(vals), best, f.paper)
		}
		if !f.higher && best > f.paper+paperRounding {
			t.Errorf("%s %s: best of %d runs %.3f above the paper's %.2f", set, f.name, len(vals), best, f.paper)
		}
	}
}

// soe embeds the triplets as Anderton et al. do for Table 2 ("Basis+SOE",
// section 3): SOE in d̂ dimensions and, if its loss stays above 1e-3, again
// in 2d̂ dimensions, keeping the higher-dimensional result. The paper tries
// 20 initialisations each time; to keep the run short we use embed's SOE
// with 4 (the d̂ fit warm-started from the basis coordinates).
// It also returns the d̂ fit alone (first), the same as final when that fit
// reached the threshold.
func soe(ts []triplet.Triplet, dHat int, seed uint64, init *mat.Dense) (final, first *embed.Result) {
	first, err := embed.Fit(context.Background(), 500, ts, embed.Options{Method: embed.SOE, Dim: dHat, Seed: seed, Init: init})
	if err != nil {
		panic(err)
	}
	if first.Loss <= 1e-3 {
		return first, first
	}
	final, err = embed.Fit(context.Background(), 500, ts, embed.Options{Method: embed.SOE, Dim: 2 * dHat, Seed: seed})
	if err != nil {
		panic(err)
	}
	return final, first
}

func (a *table2Row) add(b table2Row, w float64) {
	a.dHat += w * b.dHat
	a.cmps += w * b.cmps
	a.answers += w * b.answers
	a.tau += w * b.tau
	a.knn += w * b.knn
	a.soeTau += w * b.soeTau
	a.soeKNN += w * b.soeKNN
	a.soeDTau += w * b.soeDTau
	a.extraDTau += w * b.extraDTau
	a.extraCmps += w * b.extraCmps
	a.extraTau += w * b.extraTau
	a.extraKNN += w * b.extraKNN
	a.fallback += w * b.fallback
	a.fallbackSteps += w * b.fallbackSteps
	a.rejected += w * b.rejected
	a.rmse += w * b.rmse
	a.soeRMSE += w * b.soeRMSE
	a.extraRMSE += w * b.extraRMSE
	a.permRMSE += w * b.permRMSE
}

// permuted returns the rows of x in a seeded random order.
func permuted(x *mat.Dense, seed uint64) *mat.Dense {
	n, d := x.Dims()
	p := mat.NewDense(n, d, nil)
	for i, j := range triplet.NewRand(seed + 99).Perm(n) {
		p.SetRow(i, x.RawRowView(j))
	}
	return p
}

func logTable2(t *testing.T, rule string, rows []table2Row) {
	t.Logf("coordinates: %s", rule)
	t.Logf("%-7s %5s %8s %8s %6s %6s | %6s %6s %6s | %8s %6s %6s %6s", "set", "d̂", "cmps", "answers", "tau", "knn", "B+SOE", "knn", "(d̂)", "Extra", "E+SOE", "knn", "(d̂)")
	for i, r := range rows {
		logTable2Row(t, i, r)
	}
	t.Logf("distance RMSE (mean over pairs)  Basis  B+SOE  E+SOE | true points in a random order")
	for i, r := range rows {
		s := table2Sets[i]
		t.Logf("%-7s                          %6.3f %6.3f %6.3f | %6.3f   (paper: %.2f %.2f %.2f)", s.name, r.rmse, r.soeRMSE, r.extraRMSE, r.permRMSE, s.rmse[0], s.rmse[1], s.rmse[2])
	}
}

func logTable2Row(t *testing.T, i int, r table2Row) {
	s := table2Sets[i]
	t.Logf("%-7s %5.2f %8.0f %8.0f %6.3f %6.3f | %6.3f %6.3f %6.3f | %8.0f %6.3f %6.3f %6.3f   (paper: %.0fK cmps, tau %.2f, knn %.2f; Extra+SOE tau %.2f)",
		s.name, r.dHat, r.cmps, r.answers, r.tau, r.knn, r.soeTau, r.soeKNN, r.soeDTau, r.extraCmps, r.extraTau, r.extraKNN, r.extraDTau,
		s.cmps/1000, s.tau, s.knn, s.extraTau)
}

// TestReproduceTable2 reproduces the Basis, Basis+SOE and Extra+SOE rows of
// Anderton et al. Table 2 (error-free oracle, 500 points, mean of 10 runs)
// with both coordinate rules, and checks the product's rule (rank
// difference; the paper's median rule is reported next to it):
//
//   - comparisons of Basis and of Basis+Extra within ±25% of the paper's;
//   - Basis mean Kendall tau and kNN precision (k = ⌈log2 n⌉) no worse than
//     the paper's minus 0.05, and SOE on the Basis+Extra triplets reaching
//     tau >= 0.95 on 3dgmm (the bars);
//   - every other figure of the three rows (Basis rmse; Basis+SOE tau, kNN,
//     rmse; Extra+SOE tau, kNN, rmse) reached by at least one of our 10
//     runs, up to the paper's rounding (checkAgainstPaper: the paper's
//     single run would beat all of ours with probability 1/11 if we
//     reproduced it). The tolerance comes from the spread of our own runs
//     rather than a fixed margin because these figures live on different
//     scales (rmse is in the data's units) and depend on the SOE fit,
//     whose run-to-run spread a fixed margin would have to guess.
func TestReproduceTable2(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	rows, each := table2(t, CoordMedian, 10, 0, 1, 0, true)
	logTable2(t, CoordMedian, rows)
	logSpread(t, CoordMedian, each)
	rows, each = table2(t, CoordRankDifference, 10, 0, 1, 0, true)
	logTable2(t, CoordRankDifference, rows)
	logSpread(t, CoordRankDifference, each)
	for i, r := range rows {
		s := table2Sets[i]
		if math.Abs(r.cmps-s.cmps) > 0.25*s.cmps {
			t.Errorf("%s: %.0f comparisons, paper %.0f ± 25%%", s.name, r.cmps, s.cmps)
		}
		if math.Abs(r.extraCmps-s.extraCmps) > 0.25*s.extraCmps {
			t.Errorf("%s: %.0f comparisons with Extra, paper %.0f ± 25%%", s.name, r.extraCmps, s.extraCmps)
		}
		if r.tau < s.tau-0.05 {
			t.Errorf("%s: tau %.3f below paper %.2f - 0.05", s.name, r.tau, s.tau)
		}
		if r.knn < s.knn-0.05 {
			t.Errorf("%s: kNN precision %.3f below paper %.2f - 0.05", s.name, r.knn, s.knn)
		}
		checkAgainstPaper(t, s.name, each[i], []figure{
			{"Basis rmse", func(r table2Row) float64 { return r.rmse }, s.rmse[0], false},
			{"B+SOE tau", func(r table2Row) float64 { return r.soeTau }, s.soeTau, true},
			{"B+SOE knn", func(r table2Row) float64 { return r.soeKNN }, s.soeKNN, true},
			{"B+SOE rmse", func(r table2Row) float64 { return r.soeRMSE }, s.rmse[1], false},
			{"E+SOE tau", func(r table2Row) float64 { return r.extraTau }, s.extraTau, true},
			{"E+SOE knn", func(r table2Row) float64 { return r.extraKNN }, s.extraKNN, true},
			{"E+SOE rmse", func(r table2Row) float64 { return r.extraRMSE }, s.rmse[2], false},
		})
	}
	if rows[0].extraTau < 0.95 {
		t.Errorf("3dgmm Extra+SOE tau %.3f below 0.95", rows[0].extraTau)
	}
}

// logSpread logs the standard deviation over the runs of the Basis figures
// (the σ of TestTable2Smoke).
func logSpread(t *testing.T, rule string, each [][]table2Row) {
	t.Helper()
	for si, runs := range each {
		var tau, knn, rmse []float64
		for _, r := range runs {
			tau, knn, rmse = append(tau, r.tau), append(knn, r.knn), append(rmse, r.rmse)
		}
		t.Logf("spread of the Basis figures, %s, %s, sd over %d runs: tau %.3f, kNN %.3f, rmse %.3f", table2Sets[si].name, rule, len(runs),
			stat.StdDev(tau, nil), stat.StdDev(knn, nil), stat.StdDev(rmse, nil))
	}
}

// TestReproduceTable2Noisy repeats TestReproduceTable2 with an oracle wrong
// with probability 0.1 and 3 answers per comparison (majority vote). The
// paper has no noisy rows; the issue asks that quality degrade gracefully.
// The run must finish with every comparison asked exactly 3 times, and the
// whole pipeline under noise (Basis+Extra, then SOE) must on average still
// reach the paper's error-free Basis row, with either rule: the mean over
// the 10 runs of tau and kNN precision at least, of rmse at most the
// paper's Basis figures (up to their rounding). The mean, not the best
// run: this is a floor the pipeline must keep, not a single run to match.
func TestReproduceTable2Noisy(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	for _, rule := range []string{CoordMedian, CoordRankDifference} {
		rows, _ := table2(t, rule, 10, 0.1, 3, 0, true)
		logTable2(t, rule, rows)
		for i, r := range rows {
			s := table2Sets[i]
			if math.Abs(r.answers-3*r.cmps) > 0.5 { // means of 10 runs
				t.Errorf("%s: %.0f answers for %.0f comparisons", s.name, r.answers, r.cmps)
			}
			t.Logf("%s %s, error 0.1: Extra+SOE tau %.3f, kNN %.3f, rmse %.3f; paper's error-free Basis %.2f %.2f %.2f",
				s.name, rule, r.extraTau, r.extraKNN, r.extraRMSE, s.tau, s.knn, s.rmse[0])
			if r.extraTau < s.tau-paperRounding || r.extraKNN < s.knn-paperRounding || r.extraRMSE > s.rmse[0]+paperRounding {
				t.Errorf("%s %s, error 0.1: Extra+SOE tau %.3f, kNN %.3f, rmse %.3f short of the paper's error-free Basis %.2f %.2f %.2f",
					s.name, rule, r.extraTau, r.extraKNN, r.extraRMSE, s.tau, s.knn, s.rmse[0])
			}
		}
	}
}

// TestReproduceCrowd runs the 3dgmm set with 50 simulated annotators
// answering at once: the fallback share (random questions served because
// fewer comparisons were open than annotators) must stay below 20%, and no
// comparison may be handed out more often than Repeats.
func TestReproduceCrowd(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	for _, c := range []struct {
		p       float64
		repeats int
		extra   bool
	}{{0, 1, false}, {0, 1, true}, {0.1, 3, false}, {0.1, 3, true}} {
		const runs = 10
		var share, stepShare, answers float64
		maxPer, rejected := 0, 0
		for r := range runs {
			seed := uint64(r + 1)
			x := gmm(seed, 3)
			s := New(500, Config{Seed: seed, Repeats: c.repeats, Extra: c.extra, Coordinates: CoordRankDifference})
			st := Run(s, triplet.NewOracle(x, c.p, seed), 50, 0)
			if !st.Done {
				t.Fatal("run not done")
			}
			share += st.FallbackShare() / runs
			stepShare += float64(st.FallbackSteps) / float64(st.Steps) / runs
			answers += float64(st.Answers) / runs
			maxPer = max(maxPer, st.MaxPerComparison)
			rejected += st.Rejected
		}
		name := fmt.Sprintf("3dgmm error %.1f repeats %d extra %v", c.p, c.repeats, c.extra)
		t.Logf("%-38s 50 annotators: %6.0f answers, fallback share %.2f%% of answers, %.2f%% of steps; max handed out per comparison %d; refused %d",
			name, answers, 100*share, 100*stepShare, maxPer, rejected)
		if share >= 0.2 {
			t.Errorf("%s: fallback share %.3f", name, share)
		}
		if maxPer > c.repeats || rejected != 0 {
			t.Errorf("%s: a comparison handed out %d times (repeats %d), %d answers refused", name, maxPer, c.repeats, rejected)
		}
	}
}

// TestReproduceMixtureVariants shows how the Basis figures on 500-point
// Gaussian mixtures depend on how the mixture is drawn (the paper does not
// say): triplet.GaussianMixture with k clusters at distance sep from the
// origin, and Blobs with scikit-learn's make_blobs defaults. It documents
// the choice of table2Sets and checks what docs/basis.md draws from it:
//
//   - the mixture of table2Sets (GaussianMixture k=5 sep=2) gives the mean
//     d̂ closest to the paper's d̂ = 3 on 3dgmm of all variants (the
//     reason it was chosen);
//   - in five dimensions no variant comes within 0.05 of the paper's 5dgmm
//     kNN precision of 0.60 with either rule (why the 5dgmm row is not
//     met; TestReproduceProjectionBound gives the reason);
//   - the rank-difference rule is at least as good as the median rule in
//     tau and kNN precision on every variant (the same runs and questions;
//     why it is the default).
func TestReproduceMixtureVariants(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	type variant struct {
		name string
		gen  func(seed uint64, d int) *mat.Dense
	}
	var vs []variant
	for _, k := range []int{3, 5} {
		for _, sep := range []float64{1, 2, 3, 4} {
			vs = append(vs, variant{fmt.Sprintf("GaussianMixture k=%d sep=%g", k, sep), func(seed uint64, d int) *mat.Dense {
				x, _ := triplet.GaussianMixture(triplet.NewRand(seed), 500, d, k, sep)
				return x
			}})
		}
	}
	vs = append(vs, variant{"Blobs k=3 sd=1 box=10", func(seed uint64, d int) *mat.Dense {
		x, _ := triplet.Blobs(triplet.NewRand(seed), 500, d, 3, 1, 10)
		return x
	}})
	const runs = 10
	// tau and knn by the median rule, rtau and rknn by rank difference
	// (the rule changes neither the questions nor d̂).
	type res struct{ dHat, cmps, tau, knn, rtau, rknn float64 }
	out := make([][2]res, len(vs))
	var mu sync.Mutex
	parallel(len(vs)*2*runs, func(i int) {
		vi, di, r := i/(2*runs), (i/runs)%2, i%runs
		d := []int{3, 5}[di]
		seed := uint64(r + 1)
		x := vs[vi].gen(seed, d)
		s := New(500, Config{Seed: seed})
		Run(s, triplet.NewOracle(x, 0, seed), 0, 0)
		c, rc := s.Coordinates(), s.coordinatesBy(CoordRankDifference)
		k := embed.DefaultK(500)
		tau, knn := embed.MeanKendallTau(x, c), embed.KNNPrecision(x, c, k)
		rtau, rknn := embed.MeanKendallTau(x, rc), embed.KNNPrecision(x, rc, k)
		mu.Lock()
		o := &out[vi][di]
		o.dHat += float64(s.DHat()) / runs
		o.cmps += float64(len(s.Triplets())) / runs
		o.tau += tau / runs
		o.knn += knn / runs
		o.rtau += rtau / runs
		o.rknn += rknn / runs
		mu.Unlock()
	})
	t.Logf("%-30s | %-42s | %-42s", "mixture (500 points, 10 runs)", "d=3: d̂ cmps tau knn (median; rank diff.)", "d=5: d̂ cmps tau knn (median; rank diff.)")
	chosen, closest := -1, -1
	for i, v := range vs {
		a, b := out[i][0], out[i][1]
		t.Logf("%-30s | %4.2f %6.0f %5.3f %5.3f; %5.3f %5.3f | %4.2f %6.0f %5.3f %5.3f; %5.3f %5.3f", v.name,
			a.dHat, a.cmps, a.tau, a.knn, a.rtau, a.rknn, b.dHat, b.cmps, b.tau, b.knn, b.rtau, b.rknn)
		if v.name == "GaussianMixture k=5 sep=2" {
			chosen = i
		}
		if closest < 0 || math.Abs(a.dHat-3) < math.Abs(out[closest][0].dHat-3) {
			closest = i
		}
		if m := max(b.knn, b.rknn); m >= table2Sets[1].knn-0.05 {
			t.Errorf("%s: 5-D kNN precision %.3f reaches the paper's 5dgmm %.2f - 0.05", v.name, m, table2Sets[1].knn)
		}
		for di, o := range out[i] {
			if o.rtau < o.tau || o.rknn < o.knn {
				t.Errorf("%s d=%d: rank difference tau %.3f kNN %.3f below the median rule's %.3f %.3f", v.name, []int{3, 5}[di], o.rtau, o.rknn, o.tau, o.knn)
			}
		}
	}
	if chosen < 0 || out[chosen][0].dHat != out[closest][0].dHat {
		t.Errorf("table2Sets' mixture is not the one with d̂ closest to the paper's 3 on 3dgmm (%s, d̂ %.2f)", vs[closest].name, out[closest][0].dHat)
	}
}

// TestReproduceExtraTSTE embeds the Basis+Extra triplets of 3dgmm (error
// free, 10 runs) with t-STE instead of SOE, in d̂ dimensions warm-started
// from the basis coordinates and in the true 3 dimensions from a random
// start. Reported, not asserted: the acceptance point is met by SOE
// (TestReproduceTable2).
func TestReproduceExtraTSTE(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	const runs = 10
	var tauD, knnD, tau3, knn3 float64
	var mu sync.Mutex
	parallel(runs, func(r int) {
		seed := uint64(r + 1)
		x := gmm(seed, 3)
		e := New(500, Config{Seed: seed, Extra: true, Coordinates: CoordRankDifference})
		Run(e, triplet.NewOracle(x, 0, seed), 0, 0)
		a, err := embed.Fit(context.Background(), 500, e.Triplets(), embed.Options{Method: embed.TSTE, Dim: e.DHat(), Seed: seed, Init: e.Coordinates()})
		if err != nil {
			panic(err)
		}
		b, err := embed.Fit(context.Background(), 500, e.Triplets(), embed.Options{Method: embed.TSTE, Dim: 3, Seed: seed})
		if err != nil {
			panic(err)
		}
		k := embed.DefaultK(500)
		mu.Lock()
		tauD += embed.MeanKendallTau(x, a.X) / runs
		knnD += embed.KNNPrecision(x, a.X, k) / runs
		tau3 += embed.MeanKendallTau(x, b.X) / runs
		knn3 += embed.KNNPrecision(x, b.X, k) / runs
		mu.Unlock()
	})
	t.Logf("3dgmm Extra+t-STE: d̂ dims, warm start: tau %.3f knn %.3f; 3 dims, random start: tau %.3f knn %.3f", tauD, knnD, tau3, knn3)
}

// TestReproduceProjectionBound backs the statement in docs/basis.md that
// the paper's 5dgmm kNN precision (0.60 with d̂ = 3 axes) cannot be reached
// on any of the mixtures of TestReproduceMixtureVariants in five
// dimensions: even the exact orthogonal projection of the true points onto
// their best 3-dimensional (or 4-dimensional) principal subspace, which no
// ordinal method can beat by much with 3 (or 4) linear coordinates, keeps
// fewer of the 9 nearest neighbours than the bar of 0.55. It fails
// if a variant's projection reaches the bar.
func TestReproduceProjectionBound(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	type variant struct {
		name string
		gen  func(seed uint64) *mat.Dense
	}
	var vs []variant
	for _, k := range []int{3, 5} {
		for _, sep := range []float64{1, 2, 3, 4} {
			vs = append(vs, variant{fmt.Sprintf("GaussianMixture k=%d sep=%g", k, sep), func(seed uint64) *mat.Dense {
				x, _ := triplet.GaussianMixture(triplet.NewRand(seed), 500, 5, k, sep)
				return x
			}})
		}
	}
	vs = append(vs, variant{"Blobs k=3 sd=1 box=10", func(seed uint64) *mat.Dense {
		x, _ := triplet.Blobs(triplet.NewRand(seed), 500, 5, 3, 1, 10)
		return x
	}})
	const runs, bar = 10, 0.60 - 0.05
	k := embed.DefaultK(500)
	t.Logf("%-30s | %-13s | %-13s", "5-D mixture (500 points)", "top-3: tau knn", "top-4: tau knn")
	for _, v := range vs {
		var tau3, knn3, tau4, knn4 float64
		for r := range runs {
			x := v.gen(uint64(r + 1))
			p3, p4 := principal(x, 3), principal(x, 4)
			tau3 += embed.MeanKendallTau(x, p3) / runs
			knn3 += embed.KNNPrecision(x, p3, k) / runs
			tau4 += embed.MeanKendallTau(x, p4) / runs
			knn4 += embed.KNNPrecision(x, p4, k) / runs
		}
		t.Logf("%-30s | %5.3f %5.3f   | %5.3f %5.3f", v.name, tau3, knn3, tau4, knn4)
		if knn3 >= bar {
			t.Errorf("%s: the top-3 projection keeps kNN precision %.3f >= %.2f", v.name, knn3, bar)
		}
	}
}

// principal returns the projection of the rows of x onto their top m
// principal components.
func principal(x *mat.Dense, m int) *mat.Dense {
	var pc stat.PC
	if !pc.PrincipalComponents(x, nil) {
		panic("basis: principal components failed")
	}
	var v mat.Dense
	pc.VectorsTo(&v)
	r, c := v.Dims()
	n, _ := x.Dims()
	out := mat.NewDense(n, m, nil)
	out.Mul(x, v.Slice(0, r, 0, min(m, c)))
	return out
}

// TestTable2Smoke is the fast part of TestReproduceTable2 that runs with the
// unit tests: one Basis run (seed 1, no SOE) on 3dgmm and on 5dcube, the
// two sets whose figures we reproduce (5dgmm's cannot be met on our
// mixture; docs/basis.md), checked against the paper's Basis row with both
// coordinate rules (the paper's median rule and closer's rank difference;
// same questions). One run of ours is compared with the paper's one run,
// so the tolerance is the spread between two single runs: one-sided 95%,
// 1.645·√2·σ ≈ 2.33σ, with σ the sample standard deviation of the figure
// over the 10 runs (seeds 1-10, deterministic) of TestReproduceTable2,
// which prints it ("spread of the Basis figures"); the values below are
// those it printed on 2026-11-25. The comparisons must be within the
// reproduction's ±25% of the paper's.
func TestTable2Smoke(t *testing.T) {
	t.Parallel()
	type sigma struct{ tau, knn, rmse float64 } // σ over seeds 1-10
	for _, c := range []struct {
		set        int
		rd, median sigma
	}{
		{0, sigma{0.065, 0.179, 0.133}, sigma{0.046, 0.128, 0.111}}, // 3dgmm
		{2, sigma{0.053, 0.089, 0.033}, sigma{0.040, 0.068, 0.027}}, // 5dcube
	} {
		set := table2Sets[c.set]
		x := set.gen(1)
		s := New(500, Config{Seed: 1})
		if st := Run(s, triplet.NewOracle(x, 0, 1), 0, 0); !st.Done {
			t.Fatalf("%s: run not done", set.name)
		}
		if cmps := float64(len(s.Triplets())); math.Abs(cmps-set.cmps) > 0.25*set.cmps {
			t.Errorf("%s: %.0f comparisons, paper %.0f ± 25%%", set.name, cmps, set.cmps)
		}
		k := embed.DefaultK(500)
		for _, r := range []struct {
			rule string
			sd   sigma
		}{{CoordMedian, c.median}, {CoordRankDifference, c.rd}} {
			est := s.coordinatesBy(r.rule)
			tau, knn, rmse := embed.MeanKendallTau(x, est), embed.KNNPrecision(x, est, k), embed.DistanceRMSE(x, est)
			t.Logf("%s %s: d̂ %d, %d comparisons, tau %.3f, kNN %.3f, rmse %.3f (paper %.2f %.2f %.2f)", set.name, r.rule, s.DHat(), len(s.Triplets()), tau, knn, rmse, set.tau, set.knn, set.rmse[0])
			const z = 2.33 // 1.645·√2
			if tau < set.tau-z*r.sd.tau {
				t.Errorf("%s %s: tau %.3f below paper %.2f − 2.33·%.3f", set.name, r.rule, tau, set.tau, r.sd.tau)
			}
			if knn < set.knn-z*r.sd.knn {
				t.Errorf("%s %s: kNN precision %.3f below paper %.2f − 2.33·%.3f", set.name, r.rule, knn, set.knn, r.sd.knn)
			}
			if rmse > set.rmse[0]+z*r.sd.rmse {
				t.Errorf("%s %s: rmse %.3f above paper %.2f + 2.33·%.3f", set.name, r.rule, rmse, set.rmse[0], r.sd.rmse)
			}
		}
	}
}
