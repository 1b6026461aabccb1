package embed

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

var (
	repStartSeeds = flag.Int("start-seeds", 5, "random starts each default fit is compared with (TestReproduceStarts)")
	repStartSets  = flag.String("start-sets", "fruit,line100,plane100,line300,plane300", "data sets of TestReproduceStarts")
)

// strangeFruitPath is the real crowd file beside the checkout
// (../shared/data/README.md); tests that need it skip without it.
const strangeFruitPath = "../../../shared/data/strange-fruit-triplets.csv"

// startSet is one data set of the start comparison: training and test
// triplets, and the true points when known.
type startSet struct {
	name        string
	n           int
	train, test []triplet.Triplet
	truth       *mat.Dense
}

// strangeFruit reads the real answers: the random hold-out set (sampler
// Test, 4,014 answers) is the test set, the other 16,072 train.
func strangeFruit(t testing.TB) (startSet, bool) {
	f, err := os.Open(strangeFruitPath)
	if err != nil {
		return startSet{}, false
	}
	defer f.Close()
	set, err := triplet.ReadCSVWith(f, triplet.ReadOptions{GroupBy: "sampler"})
	if err != nil {
		t.Fatal(err)
	}
	s := startSet{name: "strange fruit", n: set.N()}
	for k, tr := range set.Triplets {
		if set.Groups[k] == "Test" {
			s.test = append(s.test, tr)
		} else {
			s.train = append(s.train, tr)
		}
	}
	return s, true
}

// simulatedSet draws n points uniformly in the unit cube of dimension d,
// m random questions answered wrongly with probability 0.1 to train on,
// and 10,000 random questions answered without noise to test on (so the
// truth itself errs on none).
func simulatedSet(name string, seed uint64, n, d, m int) startSet {
	rng := triplet.NewRand(seed)
	x := triplet.UniformCube(rng, n, d)
	train := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, seed), m)
	test := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, seed), 10000)
	return startSet{name: name, n: n, train: train, test: test, truth: x}
}

func startSets(t testing.TB, names string) []startSet {
	var sets []startSet
	for _, name := range strings.Split(names, ",") {
		switch name {
		case "fruit":
			if s, ok := strangeFruit(t); ok {
				sets = append(sets, s)
			} else {
				t.Logf("skipping the strange fruit: %s not found", strangeFruitPath)
			}
		case "line100":
			sets = append(sets, simulatedSet("line, 100 items", 3, 100, 1, 5000))
		case "plane100":
			sets = append(sets, simulatedSet("square, 100 items", 3, 100, 2, 5000))
		case "line300":
			sets = append(sets, simulatedSet("line, 300 items", 4, 300, 1, 15000))
		case "plane300":
			sets = append(sets, simulatedSet("square, 300 items", 4, 300, 2, 15000))
		default:
			t.Fatalf("unknown set %q", name)
		}
	}
	return sets
}

// TestReproduceStarts measures, for every point method in one and two
// dimensions, the default fit (default start, seed 1) against the MDS start
// and -start-seeds random starts, on the strange fruit and on simulated
// sets with known truth, and fails when the default's held-out error is
// more than 0.01 above the best any of those starts reaches, or when a
// normalised coordinate exceeds 10:
//
//	go test ./internal/embed -run TestReproduceStarts -reproduce -v
func TestReproduceStarts(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	ctx := context.Background()
	t.Log("| set | method | d | default | mds | random (min–max) | best | default − best | raw radius | max |x| | τ with truth |")
	t.Log("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range startSets(t, *repStartSets) {
		for _, m := range []Method{TSTE, STE, GNMDS, CKL, SOE} {
			for _, d := range []int{1, 2} {
				begin := time.Now()
				// One start each (Starts: 1), the default as it is.
				fit := func(st Start, seed uint64) *Result {
					starts := 1
					if st == "" {
						starts = 0
					}
					res, err := Fit(ctx, s.n, s.train, Options{Method: m, Dim: d, Seed: seed, Start: st, Starts: starts})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				def := fit("", 1)
				defErr := TripletError(def.X, s.test)
				mdsErr := TripletError(fit(StartMDS, 1).X, s.test)
				best := math.Min(defErr, mdsErr)
				lo, hi := math.Inf(1), math.Inf(-1)
				for seed := uint64(1); seed <= uint64(*repStartSeeds); seed++ {
					e := TripletError(fit(StartRandom, seed).X, s.test)
					lo, hi = math.Min(lo, e), math.Max(hi, e)
					best = math.Min(best, e)
				}
				var norm mat.Dense
				Normalize(&norm, def.X)
				big := maxAbs(&norm)
				tau := "-"
				if s.truth != nil {
					tau = fmt.Sprintf("%.3f", MeanKendallTau(s.truth, def.X))
				}
				t.Logf("| %s | %s | %d | %.4f | %.4f | %.4f–%.4f | %.4f | %+.4f | %.3g | %.2f | %s | (%.1f s)",
					s.name, m, d, defErr, mdsErr, lo, hi, best, defErr-best, RMSRadius(def.X), big, tau, time.Since(begin).Seconds())
				if defErr > best+0.01 {
					t.Errorf("%s, %s, %d-D: default held-out error %.4f, more than 0.01 above the best start's %.4f", s.name, m, d, defErr, best)
				}
				if big > 10 {
					t.Errorf("%s, %s, %d-D: normalised coordinate %.3g above 10", s.name, m, d, big)
				}
			}
		}
	}
}

func maxAbs(x *mat.Dense) float64 {
	var big float64
	r, c := x.Dims()
	for i := range r {
		for j := range c {
			big = math.Max(big, math.Abs(x.At(i, j)))
		}
	}
	return big
}

// TestReproduceTSTELambda scans t-STE's λ (−1: none) on the sets of
// TestReproduceStarts in one and two dimensions and on Table 1 (data seed
// 1, 10-D; m = 200, 1,000, 10,000), logging the held-out error and the raw
// RMS radius of the default fit (seed 1), and fails if the default λ lets
// the radius exceed 100 or costs more than 0.01 of held-out error against
// no regulariser:
//
//	go test ./internal/embed -run TestReproduceTSTELambda -reproduce -v
func TestReproduceTSTELambda(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	lambdas := []float64{-1, 0.001, 0.01, 0.1, 1}
	type row struct {
		s   startSet
		dim int
	}
	var rows []row
	for _, s := range startSets(t, *repStartSets) {
		rows = append(rows, row{s, 1}, row{s, 2})
	}
	for _, m := range []int{200, 1000, 10000} {
		train, test := table1Data(1, m)
		rows = append(rows, row{startSet{name: fmt.Sprintf("Table 1, m = %d", m), n: 100, train: train, test: test}, 10})
	}
	head := "| set | d |"
	for _, l := range lambdas {
		head += fmt.Sprintf(" λ = %g |", l)
	}
	t.Log(head + " (held-out error / raw RMS radius)")
	for _, r := range rows {
		line := fmt.Sprintf("| %s | %d |", r.s.name, r.dim)
		var none, def float64
		for _, l := range lambdas {
			res, err := Fit(context.Background(), r.s.n, r.s.train, Options{Params: TSTEParams{Lambda: l}, Dim: r.dim, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			e, rad := TripletError(res.X, r.s.test), RMSRadius(res.X)
			line += fmt.Sprintf(" %.4f / %.3g |", e, rad)
			switch l {
			case -1:
				none = e
			case defaultTSTELambda:
				def = e
				if rad > 100 {
					t.Errorf("%s, %d-D: raw radius %.3g with the default λ", r.s.name, r.dim, rad)
				}
			}
		}
		t.Log(line)
		if def > none+0.01 {
			t.Errorf("%s, %d-D: held-out error %.4f with the default λ, %.4f without", r.s.name, r.dim, def, none)
		}
	}
}
