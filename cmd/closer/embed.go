package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

func init() {
	register("embed", "learn an ordinal embedding ("+strings.Join(embed.MethodLabels(), ", ")+") from a triplet CSV", runEmbed)
}

func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed", stderr,
		"usage: closer embed --method "+strings.Join(embed.MethodNames(), "|")+" --dim D --in triplets.csv --out embedding.csv [flags]",
		"\nWrites CSV item,x1,...,xD (item ids as in the input), in the normal form of",
		"docs/embeddings.md unless --raw. With --holdout F or",
		"--holdout-column/--holdout-value it also prints the training and held-out",
		"triplet error and the time. Zero-valued method parameters take the defaults",
		"of the method (internal/embed, params.go); a flag of another\nmethod is refused.",
		"\nOdd-one-out (item1,item2,item3,odd) and rank (query,option1,…,optionN,",
		"choice1,…,choiceK) files are fitted with the format's native likelihood",
		"(t-STE's kernel: --method tste, --alpha, --lambda), or with --derived by",
		"--method on the triplets each trial implies; --holdout holds out whole",
		"trials and the format's own score is printed (odd-one-out accuracy; rank",
		"top-1 accuracy) with the derived triplet error.\n\nflags:",
	)
	fi := addFitInput(fs, fitInputFlags{
		method: embed.DefaultMethod, methodUse: "embedding method",
		seed:    "random seed (initialisation and --holdout split)",
		holdout: "hold out this fraction of the triplets (seeded) and report the held-out error", holdoutColumn: true,
	})
	var (
		out     = fs.String("out", "", "output embedding CSV, - for stdout (required)")
		iters   = fs.Int("iter", 0, "iteration cap (0: the method's default, 1000; DMOE 300)")
		tol     = fs.Float64("tol", 0, "relative tolerance (0: default)")
		initF   = fs.String("init", "", "warm start: embedding CSV item,x1,...,xD with every item of the input")
		startF  = fs.String("start", "", "start without --init: mds (classical MDS of the triplets) or random; empty: the default, mds")
		startsF = fs.Int("starts", 0, "starts without --init, the first from --start, the others random; the fit with the fewest wrong training triplets is kept (0: the default: 5 in one dimension; otherwise 3 for tste and ckl, 1 for ste and gnmds; soe --inits)")
		rawF    = fs.Bool("raw", false, "write the fit's own coordinates instead of the normal form (centred, unit root-mean-square radius, principal axes, signs fixed)")
		quiet   = fs.Bool("quiet", false, "no progress line on stderr")
		formatF = fs.String("format", "", formatUse)
		derived = fs.Bool("derived", false, "odd-one-out and rank files: fit the derived triplets with --method instead of the format's native likelihood (t-STE's kernel)")
		mflags  = addMethodFlags(fs)
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := fi.Method()
	if err != nil {
		return err
	}
	var st embed.Start
	if *startF != "" {
		if st, err = embed.ParseStart(*startF); err != nil {
			return err
		}
	}
	if fi.in == "" || *out == "" {
		fs.Usage()
		return errUsage
	}
	if err := fi.checkHoldoutColumn(); err != nil {
		return err
	}
	if fi.holdout < 0 || fi.holdout >= 1 {
		return fmt.Errorf("--holdout %g: want a fraction in [0, 1)", fi.holdout)
	}
	kind, err := fileKind(fi.in, *formatF)
	if err != nil {
		return err
	}
	if kind.Format != trial.FormatTriplet {
		if fi.hcol != "" {
			return errors.New("--holdout-column applies to triplet files only; use --holdout")
		}
		params, err := methodParams(fs, m, *mflags)
		if err != nil {
			return err
		}
		if *startsF < 0 {
			return fmt.Errorf("--starts %d: want 0 (the default) or more", *startsF)
		}
		opt := embed.Options{Params: params, Dim: fi.dim, Seed: fi.seed, MaxIter: *iters, Tol: *tol, Start: st, Starts: *startsF}
		return embedTrials(ctx, fi, kind, *derived, opt, *initF, *out, *rawF, *quiet, stdout, stderr)
	}
	if *derived {
		return errors.New("--derived applies to odd-one-out and rank files")
	}
	set, err := fi.read(fi.hcol)
	if err != nil {
		return err
	}
	train, test := set.Triplets, []triplet.Triplet(nil)
	switch {
	case fi.hcol != "":
		if train, test, err = fi.splitByColumn(set); err != nil {
			return err
		}
	case fi.holdout > 0:
		train, test = triplet.Split(set.Triplets, fi.holdout, fi.seed)
	}
	params, err := methodParams(fs, m, *mflags)
	if err != nil {
		return err
	}
	if *startsF < 0 {
		return fmt.Errorf("--starts %d: want 0 (the default) or more", *startsF)
	}
	opt := embed.Options{Params: params, Dim: fi.dim, Seed: fi.seed, MaxIter: *iters, Tol: *tol, Start: st, Starts: *startsF}
	if *initF != "" {
		x, err := readPointsFor(*initF, set.IDs)
		if err != nil {
			return err
		}
		opt.Init = x
	}
	prog := newProgress(stderr, *quiet)
	opt.Progress = prog.report
	start := time.Now()
	res, err := embed.Fit(ctx, set.N(), train, opt)
	elapsed := time.Since(start)
	prog.done()
	if err != nil {
		return err
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	x := res.X
	if !*rawF {
		x = new(mat.Dense)
		embed.Normalize(x, res.X)
	}
	if err := triplet.WritePoints(w, set.IDs, x); err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	if w != stdout {
		if err := w.(*os.File).Close(); err != nil {
			return err
		}
	}
	info := stdout
	if *out == "-" {
		info = stderr
	}
	fmt.Fprintf(info, "method %s, dim %d, %d items, %d training triplets, %d iterations, loss %.6g, raw RMS radius %.4g\n",
		m, fi.dim, set.N(), len(train), res.Iterations, res.Loss, embed.RMSRadius(res.X))
	fmt.Fprintf(info, "train error %.4f\n", embed.TripletError(res.X, train))
	if len(test) > 0 {
		fmt.Fprintf(info, "held-out error %.4f (%d triplets)\n", embed.TripletError(res.X, test), len(test))
	}
	fmt.Fprintf(info, "time %.3f s\n", elapsed.Seconds())
	return nil
}

// readPointsFor reads an embedding CSV and returns its rows in the order of
// ids; every id must be present.
func readPointsFor(path string, ids []string) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pids, x, err := triplet.ReadPoints(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	row := make(map[string]int, len(pids))
	for i, id := range pids {
		row[id] = i
	}
	_, d := x.Dims()
	out := mat.NewDense(len(ids), d, nil)
	for i, id := range ids {
		r, ok := row[id]
		if !ok {
			return nil, fmt.Errorf("%s: no point for item %q", path, id)
		}
		out.SetRow(i, x.RawRowView(r))
	}
	return out, nil
}

// progress prints a one-line, self-overwriting progress report on stderr at
// most every half second.
type progress struct {
	w     io.Writer
	quiet bool
	start time.Time
	last  time.Time
	shown bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	now := time.Now()
	return &progress{w: w, quiet: quiet, start: now, last: now}
}

func (p *progress) report(iter int, loss float64) {
	p.show(func(elapsed float64) string {
		return fmt.Sprintf("iteration %d  loss %.6g  %.1f s", iter, loss, elapsed)
	})
}

// count reports done of total units of work (fits, replicates), at most
// every half second.
func (p *progress) count(what string, done, total int) {
	p.show(func(elapsed float64) string { return fmt.Sprintf("%s %d of %d  %.1f s", what, done, total, elapsed) })
}

// show overwrites the progress line with line(seconds since the start),
// unless quiet or the last line is less than half a second old.
func (p *progress) show(line func(elapsed float64) string) {
	if p.quiet {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	fmt.Fprintf(p.w, "\r%s   ", line(now.Sub(p.start).Seconds()))
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprintln(p.w)
	}
}
