package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/uncertainty"
)

func init() {
	register("bootstrap", "per-item spread, neighbour stability and the held-out error's interval from bootstrap refits", runBootstrap)
}

func runBootstrap(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bootstrap", stderr,
		"usage: closer bootstrap --in triplets.csv --out spread.csv [--method tste] [--dim 2] [--reps 100] [flags]",
		"\nFits the embedding, refits it on --reps bootstrap resamples of the training",
		"answers (whole participants with --participant-column), aligns each refit to",
		"the fit by orthogonal Procrustes and writes CSV item,x1..xD (normal form),",
		"rms (spread), stability (share of the k nearest neighbours that recur) and the",
		"covariance cov_i_j of each item's aligned positions (the ellipse in 2-D). With",
		"--holdout it prints the held-out error with its interval. docs/embeddings.md.\n\nflags:",
	)
	fi := addFitInput(fs, fitInputFlags{
		method: embed.DefaultMethod, methodUse: "embedding method",
		seed:    "random seed (fit, resamples, --holdout split)",
		holdout: "hold out this fraction of the answers (seeded) for the error interval; 0: none", holdoutDefault: 0.1,
	})
	var (
		out   = fs.String("out", "", "output CSV, - for stdout (required)")
		reps  = fs.Int("reps", uncertainty.DefaultReps, fmt.Sprintf("bootstrap replicates (2..%d)", uncertainty.MaxReps))
		pcol  = fs.String("participant-column", "", "resample whole participants, named by this CSV column")
		k     = fs.Int("k", uncertainty.DefaultK, "nearest neighbours whose recurrence is counted")
		level = fs.Float64("level", uncertainty.DefaultLevel, "coverage of the error interval")
		iters = fs.Int("iter", 0, fmt.Sprintf("iteration cap of a replicate (0: %d from the fit, the method's default when --cold)", uncertainty.DefaultMaxIter))
		cold  = fs.Bool("cold", false, "fit each replicate from the default start instead of the fit")
		quiet = fs.Bool("quiet", false, "no progress line on stderr")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := fi.Method()
	if err != nil {
		return err
	}
	if fi.in == "" || *out == "" {
		fs.Usage()
		return errUsage
	}
	if fi.holdout < 0 || fi.holdout >= 1 {
		return fmt.Errorf("--holdout %g: want a fraction in [0, 1)", fi.holdout)
	}
	set, err := fi.read(*pcol)
	if err != nil {
		return err
	}
	trainIdx, testIdx := fi.holdOutByPosition(len(set.Triplets))
	if len(trainIdx) == 0 {
		return errors.New("no training answers")
	}
	train, test := pick(set.Triplets, trainIdx), pick(set.Triplets, testIdx)
	var groups []int
	names := map[string]int{}
	if *pcol != "" {
		for _, i := range trainIdx {
			g, ok := names[set.Groups[i]]
			if !ok {
				g = len(names)
				names[set.Groups[i]] = g
			}
			groups = append(groups, g)
		}
	}
	fitOpt := embed.Options{Method: m, Dim: fi.dim, Seed: fi.seed}
	prog := newProgress(stderr, *quiet)
	start := time.Now()
	ref, err := embed.Fit(ctx, set.N(), train, fitOpt)
	if err != nil {
		return err
	}
	refTime := time.Since(start)
	fitOpt.MaxIter = *iters
	res, err := uncertainty.Bootstrap(ctx, set.N(), train, ref.X, uncertainty.Options{
		Fit: fitOpt, Reps: *reps, Groups: groups, Test: test, K: *k, Level: *level, Cold: *cold,
		Progress: func(done, total int) { prog.count("replicate", done, total) }})
	prog.done()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := writeSpread(w, set.IDs, res); err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	if f, ok := w.(*os.File); ok && w != stdout {
		if err := f.Close(); err != nil {
			return err
		}
	}
	info := stdout
	if *out == "-" {
		info = stderr
	}
	resampled := "answers"
	if *pcol != "" {
		resampled = fmt.Sprintf("%d participants", len(names))
	}
	fmt.Fprintf(info, "method %s, dim %d, %d items, %d training answers, %d replicates resampling %s\n",
		m, fi.dim, set.N(), len(train), res.Reps, resampled)
	fmt.Fprintf(info, "median spread %.4f (unit RMS radius), median neighbour stability %.3f (k = %d)\n",
		median(res.RMS), median(res.Stability), len(res.Neighbours[0]))
	if len(test) > 0 {
		fmt.Fprintf(info, "held-out error %.4f [%.4f, %.4f] (%.0f%% interval, %d answers)\n",
			res.HeldoutError, res.ErrorLow, res.ErrorHigh, 100**level, len(test))
	}
	fmt.Fprintf(info, "time %.3f s (fit %.3f s, replicates %.3f s)\n", elapsed.Seconds(), refTime.Seconds(), (elapsed - refTime).Seconds())
	return nil
}

// writeSpread writes the bootstrap result per item: id, the reference
// coordinates, rms, stability and the covariance's upper triangle.
func writeSpread(w io.Writer, ids []string, res *uncertainty.Result) error {
	n, d := res.Reference.Dims()
	cw := csvsafe.NewWriter(w)
	rec := []string{"item"}
	for c := range d {
		rec = append(rec, "x"+strconv.Itoa(c+1))
	}
	rec = append(rec, "rms", "stability")
	for a := range d {
		for b := a; b < d; b++ {
			rec = append(rec, fmt.Sprintf("cov_%d_%d", a+1, b+1))
		}
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for i := range n {
		rec = rec[:0]
		rec = append(rec, ids[i])
		for c := range d {
			rec = append(rec, g(res.Reference.At(i, c)))
		}
		rec = append(rec, g(res.RMS[i]), g(res.Stability[i]))
		for a := range d {
			for b := a; b < d; b++ {
				rec = append(rec, g(res.Cov[i].At(a, b)))
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return embed.Quantile(s, 0.5)
}
