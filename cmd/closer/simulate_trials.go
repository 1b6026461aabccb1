package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/simulate"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// trialSimFlags are the flags of closer simulate that a run of odd-one-out
// or rank trials reads.
type trialSimFlags struct {
	kind        trial.Kind
	design      string
	points      string
	coords      string
	budget      int
	errP        float64
	seed        uint64
	checkpoints string
	dim         int
	csv         bool
	fit         string
	testTrials  int
}

// trialSimAllowed are the flags a run of odd-one-out or rank trials takes.
var trialSimAllowed = []string{"format", "design", "points", "coords", "budget", "error", "seed", "checkpoints", "dim", "csv", "fit", "test-trials"}

// simulateTrials is closer simulate --format odd-one-out|rank:N:K.
func simulateTrials(ctx context.Context, stdout io.Writer, set map[string]bool, f trialSimFlags) error {
	for name := range set {
		if !slices.Contains(trialSimAllowed, name) {
			return fmt.Errorf("--%s does not apply to --format %s", name, f.kind)
		}
	}
	if !set["design"] {
		f.design = "random"
	}
	if f.design != "random" && f.design != "active" {
		return fmt.Errorf("--design %s: %s trials are asked at random (--design random) or actively (--design active)", f.design, f.kind)
	}
	if f.coords != "" {
		return fmt.Errorf("--coords: give --points for --format %s", f.kind)
	}
	fits := map[string][]bool{"native": {true}, "derived": {false}, "both": {true, false}}[f.fit]
	if fits == nil {
		return fmt.Errorf("--fit %q: want native, derived or both", f.fit)
	}
	x, _, err := generatePoints(f.points, f.seed)
	if err != nil {
		return err
	}
	n, D := x.Dims()
	switch {
	case f.budget < 1:
		return fmt.Errorf("--budget %d: want at least 1", f.budget)
	case f.errP < 0 || f.errP > 1:
		return fmt.Errorf("--error %g: want a probability in [0, 1]", f.errP)
	case f.testTrials < 1:
		return fmt.Errorf("--test-trials %d: want at least 1", f.testTrials)
	case f.dim < 0:
		return fmt.Errorf("--dim %d: want at least 1", f.dim)
	}
	if f.dim == 0 {
		f.dim = D
	}
	cps, err := parseCheckpoints(f.checkpoints, f.budget)
	if err != nil {
		return err
	}
	var spec trial.RankSpec // zero for odd-one-out
	if f.kind.Format == trial.FormatRank {
		spec = f.kind.Rank
	}
	all, err := simulatedTrials(x, spec, f.budget+f.testTrials, f.errP, f.seed)
	if err != nil {
		return err
	}
	train, test := all.Head(f.budget), tail(all, f.budget)
	truth := simulate.Truth{X: x, Heldout: simulate.Heldout(x, heldoutSize, mix(f.seed, 4))}

	var (
		tw *tabwriter.Writer
		cw *csvsafe.Writer
	)
	if f.csv {
		cw = csvsafe.NewWriter(stdout)
		cw.Write([]string{"trials", "derived_triplets", "fit", "score", "test_triplet_error", "heldout_error", "kendall_tau"})
	} else {
		fmt.Fprintf(stdout, "# %d points in %d dimensions; format %s, %s trials; error %g; %d held-out trials; seed %d\n", n, D, f.kind, f.design, f.errP, f.testTrials, f.seed)
		score := "odd-one-out accuracy"
		if spec.N > 0 {
			score = "rank top-1 accuracy"
		}
		fmt.Fprintf(stdout, "# score: %s on the held-out trials; test-tri: error on their derived triplets; heldout: on %d fresh noise-free triplets\n", score, heldoutSize)
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "trials\ttriplets\tfit\tscore\ttest-tri\theldout\ttau\t\n")
	}
	assess := func(head simulate.Trials) error {
		c := head.Len()
		for _, native := range fits {
			opt := embed.Options{Dim: f.dim, Seed: mix(f.seed, 6)}
			q, err := simulate.AssessTrials(ctx, truth, head, test, native, opt)
			if err != nil {
				return err
			}
			how := "derived"
			if native {
				how = "native"
			}
			m := len(head.Triplets())
			if cw != nil {
				cw.Write([]string{strconv.Itoa(c), strconv.Itoa(m), how, num(q.Score), num(q.TestTripletError), num(q.Heldout), num(q.Tau)})
				cw.Flush()
				if err := cw.Error(); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", c, m, how, num(q.Score), num(q.TestTripletError), num(q.Heldout), num(q.Tau))
		}
		return nil
	}
	switch {
	case f.design == "active" && spec.N == 0:
		// The training trials' crowd is a fresh oracle of its own seed;
		// the held-out trials stay those of the random run.
		r := simulate.OddRun{Oracle: simulate.NewTrialOracle(x, f.errP, mix(f.seed, 7)), Active: true,
			Fit: embed.Options{Dim: f.dim}, Seed: mix(f.seed, 8)}
		err = simulate.RunOddOneOut(ctx, r, f.budget, cps, func(cp simulate.OddCheckpoint) error {
			return assess(simulate.Trials{Odd: cp.Trials})
		})
	case f.design == "active":
		r := simulate.RankRun{Oracle: simulate.NewTrialOracle(x, f.errP, mix(f.seed, 7)), Spec: spec, Active: true,
			Fit: embed.Options{Dim: f.dim}, Seed: mix(f.seed, 8)}
		err = simulate.RunRank(ctx, r, f.budget, cps, func(ts []trial.Rank, _ int) error {
			return assess(simulate.Trials{Rank: ts})
		})
	default:
		for _, c := range cps {
			if err = assess(train.Head(c)); err != nil {
				break
			}
		}
	}
	if err != nil {
		flushOutput(tw, cw)
		return err
	}
	flushOutput(tw, cw)
	return nil
}

// simulatedTrials returns m random trials of the format (rank when
// spec.N > 0, else odd-one-out) over the points x, answered by a
// simulate.TrialOracle wrong with probability p.
func simulatedTrials(x *mat.Dense, spec trial.RankSpec, m int, p float64, seed uint64) (simulate.Trials, error) {
	o := simulate.NewTrialOracle(x, p, mix(seed, 1))
	rng := triplet.NewRand(mix(seed, 3))
	if spec.N == 0 {
		return simulate.Trials{Odd: simulate.RandomOddOneOut(rng, o, m)}, nil
	}
	if n, _ := x.Dims(); n < spec.N+1 {
		return simulate.Trials{}, fmt.Errorf("%s needs at least %d points, have %d", spec, spec.N+1, n)
	}
	return simulate.Trials{Rank: simulate.RandomRank(rng, o, spec, m)}, nil
}

// tail returns the trials after the first m.
func tail(t simulate.Trials, m int) simulate.Trials {
	if t.Odd != nil {
		return simulate.Trials{Odd: t.Odd[m:]}
	}
	return simulate.Trials{Rank: t.Rank[m:]}
}
