package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/projection"
	"github.com/closer-lab/closer/internal/simulate"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

func init() {
	register("simulate", "run a question design against a simulated crowd", runSimulate)
}

// heldoutSize is the number of fresh random triplets for the held-out error.
const heldoutSize = 10000

const simulateUsage = `usage: closer simulate [flags]

Runs a question design (the same scheduler code as the web app) against a
simulated crowd: points from a generator or a CSV file, an oracle that
answers from Euclidean distances and errs with probability --error, and
--annotators annotators answering at once. At every checkpoint it prints
the answers used, the share of random fallback questions (asked when the
design had nothing open for an annotator, or was done), the estimated
dimension d̂ (basis) and the quality of the result against the true points:
mean Kendall tau, kNN precision (k = ⌈log2 n⌉), held-out triplet error on
10,000 fresh noise-free random triplets, and for clustered points (gmm) the
purity of kernel k-means (k-means on coordinates for t-STE and basis; up
to 5,000 points, as it needs the n×n kernel matrix).

The result is learned from the collected triplets: landmark-k1/k2 by kernel
PCA of k1/k2 in the compressed landmark feature space (fallback answers left
out), random and active by kernel PCA of k1 on all triplets, basis by its own
coordinates; --method tste fits t-STE instead (for basis: warm-started from
its coordinates). --dim sets the number of components (default: the points'
dimension).

Point sets (--points), N points in D dimensions:
  gmm[:N[:D[:K[:SEP]]]]  K unit-variance Gaussian clusters, centres at distance
                         SEP from the origin (default 1000:10:3:5, the
                         three-cluster set of the kernels reproduction)
  cube[:N[:D]]           uniform in [0,1]^D          (default 1000:3)
  ball[:N[:D]]           uniform in the unit ball    (default 1000:3)
  sphere[:N[:D]]         uniform on the unit sphere in R^D (default 1000:3)
  gaussian[:N[:D]]       N(0, I)                     (default 1000:3)
--coords FILE reads points instead (CSV item,x1,...,xD).

The active design asks random questions until --warmup answers per item are
in, then questions scored by uncertainty (--score uncertainty) or by
expected information gain (--score infogain) under the t-STE or CKL answer model
(--model), from a pool of --pool questions (heads round robin, the best of
--candidates pairs per head). As the web app's worker does, the simulator
refits the embedding (t-STE, or CKL with --model ckl, in --dim dimensions,
warm-started from the previous fit) and refreshes the pool as soon as the
warm-up is over and then every --refit-every answers.

Arms: --arms "NAME:SHARE,..." runs several designs at once on the same
points and the same crowd, instead of --design. Each annotator is assigned
to one arm when they start, by the shares (which must sum to 1; every
prefix of the annotators is within one annotator of the shares), answers
--per-annotator questions (default 50 with --arms, the app's default;
0: no limit) and is replaced by the next annotator. --heldout-share H
(default 0.1 with --arms, 0 with --design) of every annotator's questions
are held out: uniformly random comparisons, answered by the crowd like any
other, kept out of every arm's design and fit, the study's common test
set. A NAME is a design, optionally with settings after a slash that
override the flags for that arm:
  random
  landmark-k1[/L], landmark-k2[/L]  L landmarks (else --landmarks)
  basis[/extra]                     with the Extra phase (else --extra)
  active[/S]                        S a score (uncertainty or infogain;
                                    else --score), a model (tste or ckl;
                                    else --model) or both joined by "-",
                                    e.g. active/infogain-ckl
so "active/infogain:0.5,active/uncertainty:0.5" compares the two scores,
and "active:0.5,random:0.5" the active design with random. The other
flags apply to every arm of their design. Names must differ. At every
checkpoint (counted in all answers, held-out ones included) the table has
a row per arm: its annotators and answers, and the quality of its
answers' fit as for a single design, with two errors: test-error on the
crowd's held-out answers so far (as noisy as the crowd) and heldout on the
10,000 fresh noise-free triplets. --csv prints answers,test_answers,arm,
annotators,arm_answers,fallback_share,d_hat,kendall_tau,knn_precision,
test_error,heldout_error. --design with --heldout-share or --per-annotator
runs that design as one arm, with the same table.

Formats: --format odd-one-out or rank:N:K (e.g. rank:8:2) asks --budget
trials of that format instead of triplets, uniformly random (--design
random) or actively (--design active; odd-one-out: after 5 random
trials per item, the most uncertain of 20 random triples per trial under
the native fit, refitted every n trials; rank: after 1 random trial per
item, queries in turn, each with the most uncertain first choice of 50
random reference sets, refitted every n/2 trials), answered by a crowd
that follows the format's choice rule and errs with probability --error at
each choice (odd-one-out: one of the other two items; rank: a random other
reference at each of the K steps). --test-trials more trials are the
crowd's held-out set. At every checkpoint the trials so far are fitted in
--dim dimensions natively (the format's likelihood on t-STE's kernel),
by t-STE on their derived triplets, or both (--fit), and each fit is
judged by the format's own held-out score (odd-one-out accuracy; rank top-1
accuracy), the error on the held-out trials' derived triplets, the
held-out error on 10,000 fresh noise-free triplets and the mean Kendall
tau. --csv prints trials,derived_triplets,fit,score,test_triplet_error,
heldout_error,kendall_tau.

flags:
`

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, simulateUsage)
		fs.PrintDefaults()
	}
	designName := fs.String("design", "landmark-k1", "question design: random, landmark-k1, landmark-k2, basis or active")
	armsSpec := fs.String("arms", "", `several designs at once, "NAME:SHARE,..." (e.g. "active:0.5,random:0.5"; see above)`)
	heldoutShare := fs.Float64("heldout-share", 0, "share of every annotator's questions held out as the common test set, 0 <= H < 1 (default 0; 0.1 with --arms)")
	perAnnotator := fs.Int("per-annotator", 0, "questions each annotator answers before the next one takes their place (default: no limit; 50 with --arms)")
	points := fs.String("points", "gmm", "synthetic points: gmm, cube, ball, sphere or gaussian, with optional :N:D (see above)")
	coords := fs.String("coords", "", "CSV file of point coordinates (item,x1,...,xD) instead of --points")
	budget := fs.Int("budget", 10000, "number of answers to collect")
	errP := fs.Float64("error", 0, "probability that an annotator answers wrongly")
	annotators := fs.Int("annotators", 1, "annotators answering at the same time")
	repeats := fs.Int("repeats", 1, "answers wanted per comparison (landmark, basis; basis needs an odd number)")
	landmarks := fs.String("landmarks", "15", "landmark designs: the number of random landmarks, or a comma-separated list of landmark items (ids of --coords, else indices)")
	seed := fs.Uint64("seed", 1, "random seed (points, crowd, design, evaluation)")
	checkpoints := fs.String("checkpoints", "10", "K evenly spaced checkpoints up to the budget, or a comma-separated list of answer counts")
	csvOut := fs.Bool("csv", false, "print CSV: answers,fallback_share,d_hat,kendall_tau,knn_precision,heldout_error (with --arms: see above)")
	method := fs.String("method", "", "how to learn coordinates from the triplets: kpca or tste (default kpca; basis: its own coordinates)")
	dim := fs.Int("dim", 0, "components or embedding dimension (default: the points' dimension)")
	extra := fs.Bool("extra", false, "basis: run the Extra phase (sort the 2⌈log2 n⌉ nearest points of every point)")
	coordRule := fs.String("coordinates", basis.CoordRankDifference, "basis: coordinate rule, rank-difference or median (the paper's median index in the lens)")
	warmup := fs.Int("warmup", active.DefaultWarmupPerItem, "active: random answers per item before the scored questions start (R; the warm-up is R·n answers)")
	model := fs.String("model", string(active.TSTE), "active: answer model of the scores and of the worker's fit, tste or ckl")
	score := fs.String("score", string(active.Uncertainty), "active: uncertainty (answer probability closest to 1/2) or infogain (expected information gain)")
	candidates := fs.Int("candidates", active.DefaultCandidates, "active: pairs sampled and scored per head")
	pool := fs.Int("pool", 0, "active: scored questions per refresh (default: the number of items, one per head)")
	refitEvery := fs.Int("refit-every", 0, "active: answers between the worker's fits (default: the pool size)")
	formatF := fs.String("format", "triplet", "question format: triplet, odd-one-out or rank:N:K (e.g. rank:8:2); the new formats run --design random or active (see below)")
	fitF := fs.String("fit", "both", "odd-one-out and rank: how the trials are fitted at each checkpoint: native (the format's likelihood), derived (t-STE on the derived triplets) or both")
	testTrials := fs.Int("test-trials", 1000, "odd-one-out and rank: the crowd's held-out trials (as noisy as the others) for the format's own score")
	project := fs.Float64("project", 0, "after the run, fit the power-law learning curve e(n) = a + b·n^(−c) to the checkpoints' held-out errors and print the answers needed for this error and the error at twice the budget, with 80% intervals (needs --design, 4 or more checkpoints; 0: no projection)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	kind, err := trial.ParseKind(*formatF)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if kind.Format != trial.FormatTriplet {
		return simulateTrials(ctx, stdout, set, trialSimFlags{kind: kind, design: *designName, points: *points, coords: *coords,
			budget: *budget, errP: *errP, seed: *seed, checkpoints: *checkpoints, dim: *dim, csv: *csvOut, fit: *fitF, testTrials: *testTrials})
	}
	for _, f := range []string{"fit", "test-trials"} {
		if set[f] {
			return fmt.Errorf("--%s applies to --format odd-one-out and rank only", f)
		}
	}

	// The designs: one (--design), or arms (--arms). A single design with
	// a held-out share or a number of questions per annotator runs as one
	// arm.
	var specs []armSpec
	withArms := set["arms"]
	if withArms {
		if set["design"] {
			return errors.New("give either --design or --arms, not both")
		}
		var err error
		if specs, err = parseArms(*armsSpec); err != nil {
			return err
		}
		if !set["heldout-share"] {
			*heldoutShare = 0.1
		}
		if !set["per-annotator"] {
			*perAnnotator = 50
		}
	} else {
		if !slices.Contains(armDesigns, *designName) {
			return fmt.Errorf("--design %q: want random, landmark-k1, landmark-k2, basis or active", *designName)
		}
		specs = []armSpec{{name: *designName, design: *designName, share: 1}}
	}
	asArms := withArms || set["heldout-share"] || set["per-annotator"]
	if !(*heldoutShare >= 0 && *heldoutShare < 1) {
		return fmt.Errorf("--heldout-share %g: want 0 <= H < 1", *heldoutShare)
	}
	if *perAnnotator < 0 {
		return fmt.Errorf("--per-annotator %d: want at least 1 (or 0: no limit)", *perAnnotator)
	}
	has := func(designs ...string) bool {
		for _, sp := range specs {
			if slices.Contains(designs, sp.design) {
				return true
			}
		}
		return false
	}
	// onlyFor names the design(s) a flag applies to, in the words of the
	// mode (--design or --arms).
	onlyFor := func(flagName, what string) error {
		if withArms {
			return fmt.Errorf("--%s applies to %s arms only, and --arms has none", flagName, what)
		}
		return fmt.Errorf("--%s applies to --design %s only", flagName, what)
	}

	// The points.
	var (
		x      *mat.Dense
		labels []int
		ids    []string
	)
	if *coords != "" {
		if set["points"] {
			return errors.New("give either --points or --coords, not both")
		}
		f, err := os.Open(*coords)
		if err != nil {
			return err
		}
		ids, x, err = triplet.ReadPoints(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *coords, err)
		}
	} else {
		x, labels, err = generatePoints(*points, *seed)
		if err != nil {
			return err
		}
	}
	n, D := x.Dims()
	if n < 3 {
		return fmt.Errorf("need at least 3 points, have %d", n)
	}
	if *budget < 1 {
		return fmt.Errorf("--budget %d: want at least 1", *budget)
	}
	if *errP < 0 || *errP > 1 {
		return fmt.Errorf("--error %g: want a probability in [0, 1]", *errP)
	}
	if *annotators < 1 {
		return fmt.Errorf("--annotators %d: want at least 1", *annotators)
	}
	if *repeats < 1 {
		return fmt.Errorf("--repeats %d: want at least 1", *repeats)
	}
	cps, err := parseCheckpoints(*checkpoints, *budget)
	if err != nil {
		return err
	}
	if *dim < 0 {
		return fmt.Errorf("--dim %d: want at least 1", *dim)
	}
	if *dim == 0 {
		*dim = D
	}
	est := simulate.Estimator{Method: simulate.KernelPCA, Kind: kernel.K1, Dim: *dim, Seed: mix(*seed, 5)}
	switch *method {
	case "":
	case "kpca":
		if has("basis") {
			if withArms {
				return errors.New("--method kpca does not apply to basis arms (they are judged by their own coordinates, or --method tste)")
			}
			return errors.New("--method kpca does not apply to --design basis (it is judged by its own coordinates, or --method tste)")
		}
	case "tste":
		est.Method = simulate.TSTE
	default:
		return fmt.Errorf("--method %q: want kpca or tste", *method)
	}
	for _, f := range []string{"extra", "coordinates"} {
		if set[f] && !has("basis") {
			return onlyFor(f, "basis")
		}
	}
	for _, f := range []string{"warmup", "model", "score", "candidates", "pool", "refit-every"} {
		if set[f] && !has("active") {
			return onlyFor(f, "active")
		}
	}

	// The designs, each with its estimator.
	opts := designOptions{n: n, dim: *dim, ids: ids, repeats: *repeats, landmarks: *landmarks, extra: *extra, coordRule: *coordRule,
		warmup: *warmup, model: *model, score: *score, candidates: *candidates, pool: *pool, refitEvery: *refitEvery, method: *method}
	arms := make([]builtArm, len(specs))
	for i, sp := range specs {
		// A single design keeps the seeds it always had; arms get their own.
		designSeed, fitSeed := mix(*seed, 2), mix(*seed, 6)
		if withArms {
			designSeed, fitSeed = mix(designSeed, uint64(i+1)), mix(fitSeed, uint64(i+1))
		}
		b, err := buildDesign(sp, opts, est, designSeed, fitSeed)
		if err != nil {
			if withArms {
				return fmt.Errorf("arm %s: %w", sp.name, err)
			}
			return err
		}
		arms[i] = b
	}
	// Settings another design ignores are allowed, so that one command
	// line can be rerun with a different --design, but said.
	if set["landmarks"] && !has("landmark-k1", "landmark-k2") {
		if withArms {
			fmt.Fprintln(stderr, "closer simulate: note: --landmarks applies to no arm of --arms")
		} else {
			fmt.Fprintf(stderr, "closer simulate: note: --landmarks does not apply to --design %s\n", *designName)
		}
	}
	if set["repeats"] && !has("landmark-k1", "landmark-k2", "basis", "active") {
		if withArms {
			fmt.Fprintln(stderr, "closer simulate: note: --repeats applies to no arm of --arms (every random question is new)")
		} else {
			fmt.Fprintln(stderr, "closer simulate: note: --repeats does not apply to --design random (every random question is new)")
		}
	}

	truth := simulate.Truth{X: x, Labels: labels, Heldout: simulate.Heldout(x, heldoutSize, mix(*seed, 4))}
	crowd := simulate.Crowd{Oracle: triplet.NewOracle(x, *errP, mix(*seed, 1)), Annotators: *annotators, Seed: mix(*seed, 3)}
	if *project < 0 || *project >= 1 {
		return fmt.Errorf("--project %g: want a held-out error in (0, 1)", *project)
	}
	if *project > 0 && (asArms || len(cps) < projection.MinPoints) {
		return fmt.Errorf("--project needs --design without arms and at least %d checkpoints", projection.MinPoints)
	}
	if asArms {
		return simulateArms(ctx, stdout, arms, truth, crowd, simulate.Study{PerAnnotator: *perAnnotator, HeldoutShare: *heldoutShare},
			*budget, cps, *csvOut, fmt.Sprintf("%d points in %d dimensions; error %g", n, D, *errP), mix(*seed, 5), *seed)
	}
	d, worker, about := arms[0].Design, arms[0].Worker, arms[0].About
	est = arms[0].Est

	var (
		tw *tabwriter.Writer
		cw *csvsafe.Writer // its cells are all numbers; every CSV closer writes goes through csvsafe
	)
	if *csvOut {
		cw = csvsafe.NewWriter(stdout)
		cw.Write([]string{"answers", "fallback_share", "d_hat", "kendall_tau", "knn_precision", "heldout_error"})
	} else {
		fmt.Fprintf(stdout, "# %d points in %d dimensions; %s; error %g; %d annotators; seed %d\n", n, D, about, *errP, *annotators, *seed)
		printBaseline(stdout, x, labels, mix(*seed, 5))
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "answers\tfallback\td̂\ttau\tknn\theldout\tpurity\tused\t\n")
	}
	var curve []projection.Point
	stats, err := simulate.RunWithWorker(ctx, d, crowd, worker, *budget, cps, func(cp simulate.Checkpoint) error {
		q, err := simulate.Assess(ctx, cp, truth, est)
		if err != nil {
			return err
		}
		if !math.IsNaN(q.Heldout) {
			curve = append(curve, projection.Point{Answers: cp.Answers, Error: q.Heldout})
		}
		if cw != nil {
			cw.Write([]string{strconv.Itoa(cp.Answers), num(cp.FallbackShare()), dhat(q.DHat),
				num(q.Tau), num(q.KNN), num(q.Heldout)})
			cw.Flush() // a row per checkpoint as it comes
			return cw.Error()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", cp.Answers, num(cp.FallbackShare()), or(dhat(q.DHat)),
			or(num(q.Tau)), or(num(q.KNN)), or(num(q.Heldout)), or(num(q.Purity)), q.Used)
		return nil
	})
	flushOutput(tw, cw)
	if err != nil {
		return err
	}
	if !*csvOut {
		fmt.Fprintf(stdout, "# %d rounds; %d fallback answers; design done: %v; most times one comparison was handed out: %d\n",
			stats.Rounds, stats.Fallbacks, d.Done(), stats.MaxHanded)
		if stats.Fits > 0 {
			fmt.Fprintf(stdout, "# the worker refitted the embedding %d times\n", stats.Fits)
		}
		printCoverage(stdout, "", d)
	}
	if *project > 0 {
		return printProjection(stdout, curve, *project, *budget, *seed)
	}
	return nil
}

// printProjection fits the learning curve of a simulated study and prints
// the answers needed for the error target and the error at twice the
// budget, each with its 80% interval: the estimate a researcher can make
// from the study's own settings before it opens (docs/embeddings.md,
// "Dimension, uncertainty and how many more answers").
func printProjection(w io.Writer, pts []projection.Point, target float64, budget int, seed uint64) error {
	cv, err := projection.FitCurve(pts, projection.Options{Seed: seed})
	if err != nil {
		return fmt.Errorf("--project: %w", err)
	}
	e := cv.ErrorAt(float64(2 * budget))
	a := cv.AnswersFor(target)
	fmt.Fprintf(w, "# learning curve of the held-out error: e(n) = %.4g + %.4g·n^(−%.4g)\n", cv.A, cv.B, cv.C)
	fmt.Fprintf(w, "# error at %d answers: %.4f [%.4f, %.4f] (80%% interval)\n", 2*budget, e.Value, e.Low, e.High)
	fmt.Fprintf(w, "# answers for error %.4f: %s [%s, %s] (80%% interval)\n", target, count(a.Value), count(a.Low), count(a.High))
	return nil
}

// flushOutput flushes what a printer wrote to: the table or the CSV
// (the other one is nil).
func flushOutput(tw *tabwriter.Writer, cw *csvsafe.Writer) {
	if tw != nil {
		tw.Flush()
	}
	if cw != nil {
		cw.Flush()
	}
}

// printBaseline prints the purity of k-means on the true points, for
// clustered points.
func printBaseline(w io.Writer, x *mat.Dense, labels []int, seed uint64) {
	n, _ := x.Dims()
	if labels == nil || n > simulate.MaxPurityItems {
		return
	}
	k := 0
	for _, l := range labels {
		k = max(k, l+1)
	}
	fmt.Fprintf(w, "# baseline: k-means on the true points, purity %.4f\n", kernel.Purity(kernel.KMeans(x, k, 5, seed), labels))
}

// printCoverage prints a landmark design's coverage.
func printCoverage(w io.Writer, prefix string, d design.Design) {
	if ld, ok := d.(*landmark.Design); ok {
		p := ld.Progress()
		fmt.Fprintf(w, "# %scoverage %d of %d answers (%.1f%%), %d of %d comparisons fully answered\n",
			prefix, p.Answered, p.Needed, 100*p.Fraction(), p.Covered, p.Comparisons)
	}
}

// designOptions are the flags that configure the designs.
type designOptions struct {
	n, dim                       int
	ids                          []string
	repeats                      int
	landmarks                    string
	extra                        bool
	coordRule                    string
	warmup                       int
	model, score                 string
	candidates, pool, refitEvery int
	method                       string
}

// builtArm is a design ready to run (simulate.BuildDesign) with the arm
// it was built for.
type builtArm struct {
	spec armSpec
	simulate.BuiltDesign
}

// buildDesign builds the design of one arm (or of --design) from the
// flags, the arm's own settings overriding them, with the estimator est
// adapted to the design (landmarks, kernel, the basis design's own
// coordinates): simulate.BuildDesign, after the flags' checks.
func buildDesign(sp armSpec, o designOptions, est simulate.Estimator, seed, fitSeed uint64) (builtArm, error) {
	b := builtArm{spec: sp}
	ds := simulate.DesignSpec{Design: sp.design, N: o.n, Dim: o.dim, Repeats: o.repeats, Method: o.method}
	switch sp.design {
	case "landmark-k1", "landmark-k2":
		marks := o.landmarks
		if sp.landmarks != "" {
			marks = sp.landmarks
		}
		var err error
		if ds.Landmarks, ds.NumLandmarks, err = parseLandmarks(marks, o.ids, o.n); err != nil {
			return b, err
		}
	case "basis":
		ds.Extra, ds.Coordinates = o.extra || sp.extra, o.coordRule
	case "active":
		ds.Warmup, ds.Model, ds.Score, ds.Candidates, ds.Pool, ds.RefitEvery = o.warmup, o.model, o.score, o.candidates, o.pool, o.refitEvery
		if sp.model != "" {
			ds.Model = sp.model
		}
		if sp.score != "" {
			ds.Score = sp.score
		}
		if err := checkActiveFlags(ds); err != nil {
			return b, err
		}
	}
	var err error
	b.BuiltDesign, err = simulate.BuildDesign(ds, est, seed, fitSeed)
	return b, err
}

// simulateArms runs the arms with one crowd and prints, at every
// checkpoint, a row per arm: its answers and its quality, judged on the
// crowd's held-out answers so far (the test set) and on the fresh
// noise-free held-out triplets.
func simulateArms(ctx context.Context, stdout io.Writer, arms []builtArm, truth simulate.Truth, crowd simulate.Crowd, study simulate.Study,
	budget int, cps []int, csvOut bool, about string, baselineSeed, seed uint64) error {
	sims := make([]simulate.Arm, len(arms))
	for i, a := range arms {
		sims[i] = simulate.Arm{Name: a.spec.name, Share: a.spec.share, Design: a.Design, Worker: a.Worker}
	}
	var (
		tw *tabwriter.Writer
		cw *csvsafe.Writer
	)
	if csvOut {
		cw = csvsafe.NewWriter(stdout)
		cw.Write([]string{"answers", "test_answers", "arm", "annotators", "arm_answers", "fallback_share", "d_hat", "kendall_tau", "knn_precision", "test_error", "heldout_error"})
	} else {
		per := "no limit of questions per annotator"
		if study.PerAnnotator > 0 {
			per = fmt.Sprintf("%d questions each", study.PerAnnotator)
		}
		held := "nothing held out"
		if study.HeldoutShare > 0 {
			held = fmt.Sprintf("%s of every annotator's questions held out (the test set)", strconv.FormatFloat(100*study.HeldoutShare, 'g', 6, 64)+"%")
		}
		fmt.Fprintf(stdout, "# %s; %d annotators at once, %s; %s; seed %d\n", about, crowd.Annotators, per, held, seed)
		for _, a := range arms {
			fmt.Fprintf(stdout, "# arm %s, share %s: %s\n", a.spec.name, strconv.FormatFloat(a.spec.share, 'f', -1, 64), a.About)
		}
		printBaseline(stdout, truth.X, truth.Labels, baselineSeed)
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "answers\ttest\tarm\tannotators\tarm-answers\tfallback\td̂\ttau\tknn\ttest-error\theldout\tpurity\tused\t\n")
	}
	stats, err := simulate.RunArms(ctx, sims, crowd, study, budget, cps, func(cp simulate.StudyCheckpoint) error {
		tr := truth
		tr.CrowdHeldout = cp.Heldout
		for i, a := range cp.Arms {
			q, err := simulate.Assess(ctx, a.Checkpoint, tr, arms[i].Est)
			if err != nil {
				return fmt.Errorf("arm %s: %w", a.Name, err)
			}
			if cw != nil {
				cw.Write([]string{strconv.Itoa(cp.Answers), strconv.Itoa(len(cp.Heldout)), a.Name, strconv.Itoa(a.Annotators), strconv.Itoa(a.Answers),
					num(a.FallbackShare()), dhat(q.DHat), num(q.Tau), num(q.KNN), num(q.CrowdHeldout), num(q.Heldout)})
				continue
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", cp.Answers, len(cp.Heldout), a.Name, a.Annotators, a.Answers,
				num(a.FallbackShare()), or(dhat(q.DHat)), or(num(q.Tau)), or(num(q.KNN)), or(num(q.CrowdHeldout)), or(num(q.Heldout)), or(num(q.Purity)), q.Used)
		}
		if cw != nil {
			cw.Flush() // the rows of a checkpoint as they come
			return cw.Error()
		}
		return nil
	})
	flushOutput(tw, cw)
	if err != nil {
		return err
	}
	if !csvOut {
		fmt.Fprintf(stdout, "# %d answers in %d rounds from %d annotators; %d held out\n", stats.Answers, stats.Rounds, stats.Annotators, stats.Heldout)
		for i, a := range stats.Arms {
			fmt.Fprintf(stdout, "# arm %s: %d annotators, %d answers, %d fallback answers; design done: %v; most times one comparison was handed out: %d",
				a.Name, a.Annotators, a.Answers, a.Fallbacks, arms[i].Design.Done(), a.MaxHanded)
			if a.Fits > 0 {
				fmt.Fprintf(stdout, "; the worker refitted the embedding %d times", a.Fits)
			}
			fmt.Fprintln(stdout)
			printCoverage(stdout, "arm "+a.Name+": ", arms[i].Design)
		}
	}
	return nil
}

// armDesigns are the designs an arm may run.
var armDesigns = []string{"random", "landmark-k1", "landmark-k2", "basis", "active"}

// armSpec is one arm of --arms: its name as given, the design, its share,
// and the settings of its name's suffix (empty: the flags').
type armSpec struct {
	name, design string
	share        float64
	score, model string // active
	extra        bool   // basis
	landmarks    string // landmark-k1, landmark-k2
}

// parseArms reads --arms: NAME:SHARE,... with NAME = DESIGN[/SETTINGS].
// The settings are, for active, a score (uncertainty, infogain) and/or a
// model (tste, ckl) joined by "-" (active/infogain, active/infogain-ckl);
// for basis, extra; for landmark-k1 and landmark-k2, a number of
// landmarks (landmark-k1/30). The names must differ, the shares be
// positive and sum to 1.
func parseArms(s string) ([]armSpec, error) {
	const want = `want "NAME:SHARE,..." (e.g. "active:0.5,random:0.5")`
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--arms is empty: %s", want)
	}
	var specs []armSpec
	var shares []float64
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		name, shareText, ok := strings.Cut(f, ":")
		name, shareText = strings.TrimSpace(name), strings.TrimSpace(shareText)
		if !ok || name == "" {
			return nil, fmt.Errorf("--arms: %q is not NAME:SHARE; %s", f, want)
		}
		share, err := strconv.ParseFloat(shareText, 64)
		if err != nil || !(share > 0) || math.IsInf(share, 0) {
			return nil, fmt.Errorf("--arms: arm %s has share %q, want a positive number", name, shareText)
		}
		if seen[name] {
			return nil, fmt.Errorf("--arms: arm %s is given twice (two arms of one design need different settings, e.g. active/infogain and active/uncertainty)", name)
		}
		seen[name] = true
		sp := armSpec{name: name, share: share}
		d, settings, hasSettings := strings.Cut(name, "/")
		sp.design = d
		if !slices.Contains(armDesigns, d) {
			return nil, fmt.Errorf("--arms: arm %s: unknown design %q, want random, landmark-k1, landmark-k2, basis or active", name, d)
		}
		if hasSettings {
			if err := sp.parseSettings(settings); err != nil {
				return nil, fmt.Errorf("--arms: arm %s: %w", name, err)
			}
		}
		specs = append(specs, sp)
		shares = append(shares, share)
	}
	// Each share was checked above, with the arm's name; the sum as the
	// store and the simulator check it.
	if err := design.CheckShares(shares); err != nil {
		return nil, fmt.Errorf("--arms: %s", strings.TrimPrefix(err.Error(), "design: "))
	}
	return specs, nil
}

// parseSettings reads the suffix of an arm's name after "/".
func (sp *armSpec) parseSettings(s string) error {
	switch sp.design {
	case "active":
		for _, t := range strings.Split(s, "-") {
			switch {
			case t == string(active.Uncertainty) || t == string(active.InfoGain):
				if sp.score != "" {
					return fmt.Errorf("two scores (%s, %s)", sp.score, t)
				}
				sp.score = t
			case t == string(active.TSTE) || t == string(active.CKL):
				if sp.model != "" {
					return fmt.Errorf("two models (%s, %s)", sp.model, t)
				}
				sp.model = t
			default:
				return fmt.Errorf("setting %q: want a score (uncertainty or infogain) and/or a model (tste or ckl), joined by -", t)
			}
		}
	case "basis":
		if s != "extra" {
			return fmt.Errorf("setting %q: basis takes extra (the Extra phase)", s)
		}
		sp.extra = true
	case "landmark-k1", "landmark-k2":
		if k, err := strconv.Atoi(s); err != nil || k < 2 {
			return fmt.Errorf("setting %q: want a number of landmarks >= 2", s)
		}
		sp.landmarks = s
	default:
		return fmt.Errorf("%s takes no settings", sp.design)
	}
	return nil
}

// checkActiveFlags checks the active design's flags (simulate.ActiveDesign
// checks them again, in words without the flags).
func checkActiveFlags(ds simulate.DesignSpec) error {
	if _, err := active.ParseModel(ds.Model); err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	if _, err := active.ParseRule(ds.Score); err != nil {
		return fmt.Errorf("--score: %w", err)
	}
	switch {
	case ds.Warmup < 1 || ds.Warmup > active.MaxWarmupPerItem:
		return fmt.Errorf("--warmup %d: want 1..%d answers per item", ds.Warmup, active.MaxWarmupPerItem)
	case ds.Candidates < 1 || ds.Candidates > active.MaxCandidates:
		return fmt.Errorf("--candidates %d: want 1..%d", ds.Candidates, active.MaxCandidates)
	case ds.Pool < 0 || ds.Pool > active.MaxPool:
		return fmt.Errorf("--pool %d: want 1..%d", ds.Pool, active.MaxPool)
	case ds.RefitEvery < 0:
		return fmt.Errorf("--refit-every %d: want at least 1", ds.RefitEvery)
	case ds.Repeats > active.MaxRepeats:
		return fmt.Errorf("--repeats %d: want 1..%d", ds.Repeats, active.MaxRepeats)
	}
	return nil
}

// mix derives an independent seed for one use of the run's seed.
func mix(seed, use uint64) uint64 { return triplet.Mix64(seed + use*triplet.Golden) }

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

func dhat(d int) string {
	if d < 0 {
		return ""
	}
	return strconv.Itoa(d)
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// generatePoints draws the --points set with the seed.
func generatePoints(spec string, seed uint64) (*mat.Dense, []int, error) {
	parts := strings.Split(spec, ":")
	name := parts[0]
	defaults := map[string][]float64{
		"gmm":      {1000, 10, 3, 5},
		"cube":     {1000, 3},
		"ball":     {1000, 3},
		"sphere":   {1000, 3},
		"gaussian": {1000, 3},
	}
	vals, ok := defaults[name]
	if !ok {
		return nil, nil, fmt.Errorf("--points %q: want gmm, cube, ball, sphere or gaussian, optionally with :N:D", spec)
	}
	if len(parts)-1 > len(vals) {
		return nil, nil, fmt.Errorf("--points %q: %s takes at most %d numbers", spec, name, len(vals))
	}
	for i, p := range parts[1:] {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v <= 0 || (i < 3 && v != math.Trunc(v)) {
			return nil, nil, fmt.Errorf("--points %q: %q is not a positive %s", spec, p, map[bool]string{true: "integer", false: "number"}[i < 3])
		}
		vals[i] = v
	}
	N, D := int(vals[0]), int(vals[1])
	if N < 3 || N > 1000000 || D > 10000 {
		return nil, nil, fmt.Errorf("--points %q: want 3..1,000,000 points in at most 10,000 dimensions", spec)
	}
	rng := triplet.NewRand(mix(seed, 0))
	switch name {
	case "gmm":
		K := int(vals[2])
		if K > N {
			return nil, nil, fmt.Errorf("--points %q: %d clusters for %d points", spec, K, N)
		}
		x, labels := triplet.GaussianMixture(rng, N, D, K, vals[3])
		return x, labels, nil
	case "cube":
		return triplet.UniformCube(rng, N, D), nil, nil
	case "ball":
		return triplet.Ball(rng, N, D), nil, nil
	case "sphere":
		return triplet.Sphere(rng, N, D), nil, nil
	default:
		return triplet.Gaussian(rng, N, D, 1), nil, nil
	}
}

// parseCheckpoints reads K (evenly spaced) or a comma-separated list.
func parseCheckpoints(s string, budget int) ([]int, error) {
	if !strings.Contains(s, ",") {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--checkpoints %q: want a number of checkpoints >= 1 or a comma-separated list of answer counts", s)
		}
		return simulate.Even(budget, k), nil
	}
	var cps []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return nil, fmt.Errorf("--checkpoints: %q is not a positive answer count", f)
		}
		cps = append(cps, c)
	}
	return cps, nil
}

// parseLandmarks reads a number of landmarks or a comma-separated list of
// items (ids when the points came with ids, else indices).
func parseLandmarks(s string, ids []string, n int) (list []int, num int, err error) {
	if !strings.Contains(s, ",") {
		num, err = strconv.Atoi(s)
		if err != nil || num < 2 {
			return nil, 0, fmt.Errorf("--landmarks %q: want a number of landmarks >= 2 or a comma-separated list of items", s)
		}
		return nil, num, nil
	}
	index := map[string]int{}
	for i, id := range ids {
		index[id] = i
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if ids != nil {
			i, ok := index[f]
			if !ok {
				return nil, 0, fmt.Errorf("--landmarks: no item %q in the coordinates file", f)
			}
			list = append(list, i)
			continue
		}
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= n {
			return nil, 0, fmt.Errorf("--landmarks: %q is not an item index in 0..%d", f, n-1)
		}
		list = append(list, i)
	}
	return list, 0, nil
}
