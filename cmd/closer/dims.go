package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/closer-lab/closer/internal/dimension"
	"github.com/closer-lab/closer/internal/embed"
)

func init() {
	register("dims", "choose the embedding dimension by k-fold cross-validation (one-standard-error rule)", runDims)
}

func runDims(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dims", stderr,
		"usage: closer dims --in triplets.csv [--method ste] [--max-dim 5] [--folds 5] [flags]",
		"\nFits every dimension 1..--max-dim on all folds but one and prints the mean",
		"held-out triplet error of each with its standard error, the best dimension and",
		"the suggested one: the smallest within one standard error of the best (Hastie,",
		"Tibshirani and Friedman, ESL sec. 7.10). docs/embeddings.md, \"Dimension, uncertainty and how many more answers\".\n\nflags:",
	)
	fi := addFitInput(fs, fitInputFlags{
		method: dimension.DefaultMethod, methodUse: "embedding method of the folds' fits", noDim: true,
		seed: "random seed (folds and starts)",
	})
	var (
		maxDim = fs.Int("max-dim", dimension.DefaultMaxDim, fmt.Sprintf("largest dimension tried (1..%d)", dimension.MaxMaxDim))
		folds  = fs.Int("folds", dimension.DefaultFolds, fmt.Sprintf("number of folds (2..%d)", dimension.MaxFolds))
		iters  = fs.Int("iter", 0, "iteration cap of each fit (0: the method's default)")
		quiet  = fs.Bool("quiet", false, "no progress line on stderr")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := fi.Method()
	if err != nil {
		return err
	}
	if fi.in == "" {
		fs.Usage()
		return errUsage
	}
	set, err := fi.read("")
	if err != nil {
		return err
	}
	opt := dimension.Options{Fit: embed.Options{Method: m, Seed: fi.seed, MaxIter: *iters}, MaxDim: *maxDim, Folds: *folds}
	prog := newProgress(stderr, *quiet)
	opt.Progress = func(done, total int) { prog.count("fit", done, total) }
	start := time.Now()
	res, err := dimension.CrossValidate(ctx, set.N(), set.Triplets, opt)
	prog.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d-fold cross-validation of %s on %d answers over %d items\n", res.Folds, m, res.Answers, set.N())
	fmt.Fprintln(stdout, "dim  held-out  std.err  train")
	for _, r := range res.Rows {
		mark := ""
		switch {
		case r.Dim == res.Suggested && r.Dim == res.Best:
			mark = "  best, suggested"
		case r.Dim == res.Suggested:
			mark = "  suggested"
		case r.Dim == res.Best:
			mark = "  best"
		}
		fmt.Fprintf(stdout, "%3d  %.4f    %.4f   %.4f%s\n", r.Dim, r.Mean, r.SE, r.Train, mark)
	}
	fmt.Fprintf(stdout, "best dim %d\nsuggested dim %d (the smallest within one standard error of the best)\n", res.Best, res.Suggested)
	fmt.Fprintf(stdout, "time %.3f s\n", time.Since(start).Seconds())
	return nil
}
