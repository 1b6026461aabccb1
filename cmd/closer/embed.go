package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

func init() {
	register("embed", "learn an ordinal embedding (t-STE, STE, GNMDS, CKL, SOE, DMOE) from a triplet CSV", runEmbed)
}

func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: closer embed --method tste|ste|gnmds|ckl|soe|dmoe --dim D --in triplets.csv --out embedding.csv [flags]")
		fmt.Fprintln(stderr, "\nWrites CSV item,x1,...,xD (item ids as in the input), in the normal form of")
		fmt.Fprintln(stderr, "docs/embeddings.md unless --raw. With --holdout F or")
		fmt.Fprintln(stderr, "--holdout-column/--holdout-value it also prints the training and held-out")
		fmt.Fprintln(stderr, "triplet error and the time. Zero-valued method parameters take the defaults")
		fmt.Fprintln(stderr, "of the method (internal/embed, params.go); a flag of another\nmethod is refused.\n\nflags:")
		fs.PrintDefaults()
	}
	var (
		method  = fs.String("method", "tste", "embedding method: tste, ste, gnmds, ckl, soe or dmoe")
		dim     = fs.Int("dim", 2, "embedding dimension")
		in      = fs.String("in", "", "triplet CSV (columns anchor,closer,farther) (required)")
		out     = fs.String("out", "", "output embedding CSV, - for stdout (required)")
		seed    = fs.Uint64("seed", 1, "random seed (initialisation and --holdout split)")
		iters   = fs.Int("iter", 0, "iteration cap (0: the method's default, 1000; DMOE 300)")
		tol     = fs.Float64("tol", 0, "relative tolerance (0: default)")
		holdout = fs.Float64("holdout", 0, "hold out this fraction of the triplets (seeded) and report the held-out error")
		hcol    = fs.String("holdout-column", "", "hold out the rows whose value in this CSV column is --holdout-value")
		hval    = fs.String("holdout-value", "", "value of --holdout-column that marks held-out rows (e.g. Test)")
		initF   = fs.String("init", "", "warm start: embedding CSV item,x1,...,xD with every item of the input")
		startF  = fs.String("start", "", "start without --init: mds (classical MDS of the triplets) or random; empty: the default, mds")
		startsF = fs.Int("starts", 0, "starts without --init, the first from --start, the others random; the fit with the fewest wrong training triplets is kept (0: the default: 5 in one dimension; otherwise 3 for tste and ckl, 1 for ste and gnmds; soe --inits)")
		rawF    = fs.Bool("raw", false, "write the fit's own coordinates instead of the normal form (centred, unit root-mean-square radius, principal axes, signs fixed)")
		quiet   = fs.Bool("quiet", false, "no progress line on stderr")
		mflags  = addMethodFlags(fs)
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := embed.ParseMethod(*method)
	if err != nil {
		return err
	}
	var st embed.Start
	if *startF != "" {
		if st, err = embed.ParseStart(*startF); err != nil {
			return err
		}
	}
	if *in == "" || *out == "" {
		fs.Usage()
		return errUsage
	}
	if (*hcol == "") != (*hval == "") {
		return errors.New("--holdout-column and --holdout-value go together")
	}
	if *hcol != "" && *holdout > 0 {
		return errors.New("use either --holdout or --holdout-column, not both")
	}
	if *holdout < 0 || *holdout >= 1 {
		return fmt.Errorf("--holdout %g: want a fraction in [0, 1)", *holdout)
	}
	set, err := readTriplets(*in, *hcol)
	if err != nil {
		return err
	}
	train, test := set.Triplets, []triplet.Triplet(nil)
	switch {
	case *hcol != "":
		train = nil
		for k, t := range set.Triplets {
			if set.Groups[k] == *hval {
				test = append(test, t)
			} else {
				train = append(train, t)
			}
		}
		if len(test) == 0 {
			return fmt.Errorf("%s: no row has %s = %q", *in, *hcol, *hval)
		}
		if len(train) == 0 {
			return fmt.Errorf("%s: every row has %s = %q, nothing to train on", *in, *hcol, *hval)
		}
	case *holdout > 0:
		train, test = triplet.Split(set.Triplets, *holdout, *seed)
	}
	params, err := methodParams(fs, m, *mflags)
	if err != nil {
		return err
	}
	if *startsF < 0 {
		return fmt.Errorf("--starts %d: want 0 (the default) or more", *startsF)
	}
	opt := embed.Options{Params: params, Dim: *dim, Seed: *seed, MaxIter: *iters, Tol: *tol, Start: st, Starts: *startsF}
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
		m, *dim, set.N(), len(train), res.Iterations, res.Loss, embed.RMSRadius(res.X))
	fmt.Fprintf(info, "train error %.4f\n", embed.TripletError(res.X, train))
	if len(test) > 0 {
		fmt.Fprintf(info, "held-out error %.4f (%d triplets)\n", embed.TripletError(res.X, test), len(test))
	}
	fmt.Fprintf(info, "time %.3f s\n", elapsed.Seconds())
	return nil
}

// readTriplets reads a triplet CSV, keeping the column group (if any).
func readTriplets(path, group string) (*triplet.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set, err := triplet.ReadCSVWith(f, triplet.ReadOptions{GroupBy: group})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
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
	if p.quiet {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	fmt.Fprintf(p.w, "\riteration %d  loss %.6g  %.1f s   ", iter, loss, now.Sub(p.start).Seconds())
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprintln(p.w)
	}
}

// methodFlags are the flags that set one method's own parameters.
type methodFlags struct {
	alpha, lambda, mu, margin, nu float64
	inits                         int
	paperStop                     bool
}

// addMethodFlags defines the flags of methodFlags on fs.
func addMethodFlags(fs *flag.FlagSet) *methodFlags {
	f := new(methodFlags)
	fs.Float64Var(&f.alpha, "alpha", 0, "t-STE degrees of freedom (0: max(dim-1, 1))")
	fs.Float64Var(&f.lambda, "lambda", 0, "regularisation weight of t-STE, STE, GNMDS, CKL and DMOE (0: the method's default, negative: none)")
	fs.Float64Var(&f.mu, "mu", 0, "CKL mu (0: 0.1)")
	fs.Float64Var(&f.margin, "margin", 0, "hinge margin of GNMDS, SOE and DMOE (0: GNMDS 1, SOE 0.1, DMOE gamma0 1)")
	fs.IntVar(&f.inits, "inits", 0, "SOE random initialisations (0: 4)")
	fs.Float64Var(&f.nu, "nu", 0, "DMOE nu (0: 1)")
	fs.BoolVar(&f.paperStop, "paper-stop", false, "DMOE: stop by Ma et al.'s rule (objective change per triplet below 0.001) instead of at convergence; with --dim equal to the number of items this is the paper's Table 1 protocol")
	return f
}

// methodParams builds m's parameters from the flags, refusing a flag that
// was given but is not one of m's (it would otherwise be ignored silently).
func methodParams(fs *flag.FlagSet, m embed.Method, f methodFlags) (embed.Params, error) {
	var (
		p    embed.Params
		owns []string
	)
	switch m {
	case embed.TSTE:
		p, owns = embed.TSTEParams{Alpha: f.alpha, Lambda: f.lambda}, []string{"alpha", "lambda"}
	case embed.STE:
		p, owns = embed.STEParams{Lambda: f.lambda}, []string{"lambda"}
	case embed.GNMDS:
		p, owns = embed.GNMDSParams{Lambda: f.lambda, Margin: f.margin}, []string{"lambda", "margin"}
	case embed.CKL:
		p, owns = embed.CKLParams{Lambda: f.lambda, Mu: f.mu}, []string{"lambda", "mu"}
	case embed.SOE:
		p, owns = embed.SOEParams{Margin: f.margin, Inits: f.inits}, []string{"margin", "inits"}
	case embed.DMOE:
		p, owns = embed.DMOEParams{Lambda: f.lambda, Margin: f.margin, Nu: f.nu, PaperStop: f.paperStop}, []string{"lambda", "margin", "nu", "paper-stop"}
	default:
		return nil, fmt.Errorf("no parameters for method %s", m)
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err != nil || !methodFlagNames[fl.Name] || slices.Contains(owns, fl.Name) {
			return
		}
		err = fmt.Errorf("--%s does not apply to --method %s (its parameters: --%s)", fl.Name, m, strings.Join(owns, ", --"))
	})
	return p, err
}

// methodFlagNames are the flags of methodFlags.
var methodFlagNames = map[string]bool{"alpha": true, "lambda": true, "mu": true, "margin": true, "inits": true, "nu": true, "paper-stop": true}
