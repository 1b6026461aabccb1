package simulate

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// oddAccuracy fits trials natively (t-STE's defaults, dim dimensions) and
// returns the odd-one-out accuracy on test.
func oddAccuracy(t *testing.T, n, dim int, trials, test []trial.OddOneOut, seed uint64) float64 {
	t.Helper()
	res, err := embed.FitOddOneOut(context.Background(), n, trials, embed.Options{Dim: dim, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	var z mat.Dense
	embed.Normalize(&z, res.X)
	return embed.OddOneOutAccuracy(&z, test)
}

// TestRunOddOneOut: a random and an active run each answer the budget,
// call every checkpoint once, and the active one refits after the warm-up
// (5·30 trials, then every 30: (600 − 150)/30 = 15 fits).
func TestRunOddOneOut(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(11)
	x := triplet.Gaussian(rng, 30, 2, 1)
	for _, active := range []bool{false, true} {
		var seen []int
		var fits int
		r := OddRun{Oracle: NewTrialOracle(x, 0, 12), Active: active, Fit: embed.Options{Dim: 2}, Seed: 13}
		err := RunOddOneOut(context.Background(), r, 600, []int{100, 300}, func(cp OddCheckpoint) error {
			seen = append(seen, len(cp.Trials))
			fits = cp.Fits
			for _, tr := range cp.Trials {
				if err := tr.Validate(30); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if active {
			want = 15
		}
		if len(seen) != 3 || seen[2] != 600 || fits != want {
			t.Errorf("active %v: checkpoints %v, %d fits (want 15 when active)", active, seen, fits)
		}
	}
}

// TestRunRank: random and active rank runs answer the budget with valid
// 8-choose-2 trials and call every checkpoint once; the active one refits
// after the warm-up of 30 trials every 15: (120 − 30)/15 = 6 fits.
func TestRunRank(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(21)
	x := triplet.Gaussian(rng, 30, 2, 1)
	spec := trial.RankSpec{N: 8, K: 2}
	for _, active := range []bool{false, true} {
		var seen []int
		var fits int
		r := RankRun{Oracle: NewTrialOracle(x, 0, 22), Spec: spec, Active: active, Fit: embed.Options{Dim: 2}, Seed: 23}
		err := RunRank(context.Background(), r, 120, []int{40}, func(ts []trial.Rank, f int) error {
			seen = append(seen, len(ts))
			fits = f
			for _, tr := range ts {
				if err := tr.Validate(30, spec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if active {
			want = 6
		}
		if len(seen) != 2 || seen[1] != 120 || fits != want {
			t.Errorf("active %v: checkpoints %v, %d fits, want %d", active, seen, fits, want)
		}
	}
}
