package dimension

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

var (
	reproduce  = flag.Bool("reproduce", false, "run the slow reproductions (dimension recovery, docs/reproductions.md)")
	repItems   = flag.Int("items", 100, "items of the dimension-recovery reproduction")
	repAnswers = flag.Int("answers", 8000, "answers of the dimension-recovery reproduction")
	repSeeds   = flag.Int("seeds", 10, "seeds per true dimension")
	repDims    = flag.String("dims", "1,2,3,5", "true dimensions")
	repMethod  = flag.String("method", "", "embedding method (empty: DefaultMethod)")
)

// study draws n points from N(0, I) in d dimensions and m random questions
// answered by the simulated oracle, wrong with probability 0.1.
func study(n, d, m int, seed uint64) []triplet.Triplet {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, n, d, 1)
	return triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, seed), m)
}

// TestReproduceDimension checks the target of issue 28: on simulated data
// (n points from N(0, I_d), random questions, 10% wrong answers) the
// one-standard-error rule recovers d = 1, 2, 3, 5 in at least 8 of 10 seeds
// each.
//
//	go test ./internal/dimension -run TestReproduceDimension -reproduce -v -timeout 60m
func TestReproduceDimension(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	var m embed.Method // DefaultMethod
	if *repMethod != "" {
		var err error
		if m, err = embed.ParseMethod(*repMethod); err != nil {
			t.Fatal(err)
		}
	}
	var dims []int
	for _, s := range strings.Split(*repDims, ",") {
		var d int
		if _, err := fmt.Sscan(s, &d); err != nil {
			t.Fatal(err)
		}
		dims = append(dims, d)
	}
	start := time.Now()
	for _, d := range dims {
		hits := 0
		counts := map[int]int{}
		for s := range *repSeeds {
			seed := uint64(1000*d + s + 1)
			ts := study(*repItems, d, *repAnswers, seed)
			maxDim := max(4, d+2)
			res, err := CrossValidate(context.Background(), *repItems, ts, Options{Fit: embed.Options{Method: m, Seed: seed}, MaxDim: maxDim})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, r := range res.Rows {
				fmt.Fprintf(&b, " %d:%.4f±%.4f", r.Dim, r.Mean, r.SE)
			}
			t.Logf("d=%d seed %d: best %d, suggested %d;%s", d, seed, res.Best, res.Suggested, b.String())
			counts[res.Suggested]++
			if res.Suggested == d {
				hits++
			}
		}
		t.Logf("| %d | %d of %d | %v |", d, hits, *repSeeds, counts)
		if hits < 8**repSeeds/10 {
			t.Errorf("true d = %d recovered in %d of %d seeds, want at least 80%%", d, hits, *repSeeds)
		}
	}
	t.Logf("time %.1f s", time.Since(start).Seconds())
}

// TestOneSE: the rule picks the smallest dimension within one standard
// error of the best, not the best itself, and not one just outside.
func TestOneSE(t *testing.T) {
	t.Parallel()
	rows := []Row{
		{Dim: 1, Mean: 0.30, SE: 0.01},
		{Dim: 2, Mean: 0.158, SE: 0.004},
		{Dim: 3, Mean: 0.150, SE: 0.009},
		{Dim: 4, Mean: 0.155, SE: 0.003},
	}
	if best, sug := OneSE(rows); best != 3 || sug != 2 {
		t.Errorf("OneSE = best %d, suggested %d; want 3, 2", best, sug)
	}
	rows[1].Mean = 0.1595 // outside 0.150 + 0.009
	if best, sug := OneSE(rows); best != 3 || sug != 3 {
		t.Errorf("OneSE = best %d, suggested %d; want 3, 3", best, sug)
	}
	if best, sug := OneSE(nil); best != 0 || sug != 0 {
		t.Errorf("OneSE(nil) = %d, %d", best, sug)
	}
}

func TestMeanSE(t *testing.T) {
	t.Parallel()
	m, se := MeanSE([]float64{1, 2, 3, 4})
	// sd = √(5/3), se = sd/2
	if m != 2.5 || math.Abs(se-math.Sqrt(5.0/3)/2) > 1e-12 {
		t.Errorf("MeanSE = %g, %g", m, se)
	}
}

func TestFoldsBalanced(t *testing.T) {
	t.Parallel()
	f := Folds(103, 5, 7)
	count := make([]int, 5)
	for _, k := range f {
		count[k]++
	}
	for k, c := range count {
		if c != 20 && c != 21 {
			t.Errorf("fold %d has %d answers, want 20 or 21", k, c)
		}
	}
}

// TestCrossValidateRecoversSmallCase is the fast check of the rule on one
// small simulated study (60 items in 2-D, 3,000 answers, 10% wrong): the
// suggested dimension is 2, the table is deterministic whatever the number
// of workers, and 1-D is clearly worse.
func TestCrossValidateRecoversSmallCase(t *testing.T) {
	t.Parallel()
	ts := study(60, 2, 3000, 11)
	opt := Options{Fit: embed.Options{Method: embed.STE, Seed: 3}, MaxDim: 3, Folds: 4}
	res, err := CrossValidate(context.Background(), 60, ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		t.Logf("d=%d held-out %.4f ± %.4f (train %.4f) %v", r.Dim, r.Mean, r.SE, r.Train, r.Errors)
	}
	if res.Suggested != 2 {
		t.Errorf("suggested d = %d, want 2", res.Suggested)
	}
	if res.Rows[0].Mean < res.Rows[1].Mean+3*res.Rows[1].SE {
		t.Errorf("1-D error %.4f not clearly above 2-D %.4f", res.Rows[0].Mean, res.Rows[1].Mean)
	}
	opt.Workers = 1
	again, err := CrossValidate(context.Background(), 60, ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	for d := range res.Rows {
		for f := range res.Rows[d].Errors {
			if res.Rows[d].Errors[f] != again.Rows[d].Errors[f] {
				t.Fatalf("d=%d fold %d: %g with parallel folds, %g with one worker", d+1, f, res.Rows[d].Errors[f], again.Rows[d].Errors[f])
			}
		}
	}
}

func TestCrossValidateCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := CrossValidate(ctx, 60, study(60, 2, 600, 1), Options{Fit: embed.Options{Method: embed.STE}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCrossValidateBadOptions(t *testing.T) {
	t.Parallel()
	ts := study(10, 2, 50, 1)
	for _, o := range []Options{{Folds: 1}, {Folds: MaxFolds + 1}, {MaxDim: -1}, {MaxDim: MaxMaxDim + 1}} {
		if _, err := CrossValidate(context.Background(), 10, ts, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := CrossValidate(context.Background(), 10, ts[:3], Options{}); err == nil {
		t.Error("3 answers for 5 folds: no error")
	}
}
