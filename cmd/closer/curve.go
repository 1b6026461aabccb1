package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/projection"
)

func init() {
	register("curve", "learning curve and its power-law projection: the error at N answers, the answers for an error", runCurve)
}

func runCurve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("curve", stderr,
		"usage: closer curve --in triplets.csv [--method tste] [--dim 2] [--target E] [--at N] [flags]",
		"\nHolds out --holdout of the answers, fits the first s of the others (in file",
		"order, the order they were collected in) for --points sizes s from an --ratio'th",
		"of them to all, fits e(n) = a + b·n^(−c) to the held-out errors and prints the",
		"error expected at --at answers and the answers needed for --target, with",
		"--level intervals. docs/embeddings.md, \"Dimension, uncertainty and how many more answers\".\n\nflags:",
	)
	fi := addFitInput(fs, fitInputFlags{
		method: embed.DefaultMethod, methodUse: "embedding method",
		seed:    "random seed (hold-out split, fits, bootstrap)",
		holdout: "hold out this fraction of the answers (seeded) to measure the curve on", holdoutDefault: 0.1,
	})
	var (
		points = fs.Int("points", projection.DefaultPoints, "points of the curve (4..50)")
		ratio  = fs.Float64("ratio", projection.DefaultRatio, "the first point is at the training answers over this")
		target = fs.Float64("target", 0, "print the answers needed for this held-out error (0: none)")
		at     = fs.Int("at", 0, "print the error expected at this many training answers (0: twice the training answers)")
		level  = fs.Float64("level", projection.DefaultLevel, "coverage of the intervals")
		quiet  = fs.Bool("quiet", false, "no progress line on stderr")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := fi.Method()
	if err != nil {
		return err
	}
	switch {
	case fi.in == "":
		fs.Usage()
		return errUsage
	case !(fi.holdout > 0 && fi.holdout < 1):
		return fmt.Errorf("--holdout %g: want a fraction in (0, 1)", fi.holdout)
	case *points < projection.MinPoints || *points > 50:
		return fmt.Errorf("--points %d: want %d..50", *points, projection.MinPoints)
	case !(*ratio > 1):
		return fmt.Errorf("--ratio %g: want more than 1", *ratio)
	case *target < 0 || *target >= 1:
		return fmt.Errorf("--target %g: want an error in (0, 1)", *target)
	case *at < 0:
		return fmt.Errorf("--at %d: want a positive number of answers", *at)
	}
	set, err := fi.read("")
	if err != nil {
		return err
	}
	// Hold out a seeded share by position, keeping the others in file order.
	trainIdx, testIdx := fi.holdOutByPosition(len(set.Triplets))
	train, test := pick(set.Triplets, trainIdx), pick(set.Triplets, testIdx)
	if len(test) == 0 || len(train) < *points {
		return fmt.Errorf("%d training and %d held-out answers: too few for a curve", len(train), len(test))
	}
	sizes := projection.Sizes(len(train), *points, *ratio)
	if len(sizes) < projection.MinPoints {
		return fmt.Errorf("only %d distinct sizes: too few answers for %d points", len(sizes), *points)
	}
	prog := newProgress(stderr, *quiet)
	if !*quiet {
		fmt.Fprintf(stderr, "fitting %d sizes ...\n", len(sizes))
	}
	start := time.Now()
	pts, err := projection.Measure(ctx, set.N(), train, test, sizes, embed.Options{Method: m, Dim: fi.dim, Seed: fi.seed}, 0)
	prog.done()
	if err != nil {
		return err
	}
	cv, err := projection.FitCurve(pts, projection.Options{Level: *level, Seed: fi.seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "learning curve of %s, dim %d, %d items, held-out error on %d answers\n", m, fi.dim, set.N(), len(test))
	fmt.Fprintln(stdout, "answers  held-out  fitted")
	for _, p := range pts {
		fmt.Fprintf(stdout, "%7d  %.4f    %.4f\n", p.Answers, p.Error, cv.Error(float64(p.Answers)))
	}
	fmt.Fprintf(stdout, "fit e(n) = %.4g + %.4g·n^(−%.4g)\n", cv.A, cv.B, cv.C)
	n := *at
	if n == 0 {
		n = 2 * len(train)
	}
	e := cv.ErrorAt(float64(n))
	fmt.Fprintf(stdout, "error at %d answers %.4f [%.4f, %.4f] (%.0f%% interval)\n", n, e.Value, e.Low, e.High, 100**level)
	if *target > 0 {
		a := cv.AnswersFor(*target)
		fmt.Fprintf(stdout, "answers for error %.4f: %s [%s, %s] (%.0f%% interval)\n",
			*target, count(a.Value), count(a.Low), count(a.High), 100**level)
		if math.IsInf(a.Value, 1) {
			fmt.Fprintf(stdout, "the curve levels off at %.4f: more answers of this kind alone do not reach %.4f\n", cv.A, *target)
		} else {
			fmt.Fprintf(stdout, "about %.0f more answers than the %d trained on\n", math.Max(0, math.Ceil(a.Value)-float64(len(train))), len(train))
		}
	}
	fmt.Fprintf(stdout, "time %.3f s\n", time.Since(start).Seconds())
	return nil
}

// count prints an answer count, "never" for +Inf (or beyond 10¹⁵).
func count(v float64) string {
	if math.IsInf(v, 1) || v > 1e15 {
		return "never"
	}
	return fmt.Sprintf("%.0f", math.Ceil(v))
}
