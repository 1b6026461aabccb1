package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/simulate"
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
	points := fs.String("points", "gmm", "synthetic points: gmm, cube, ball, sphere or gaussian, with optional :N:D (see above)")
	coords := fs.String("coords", "", "CSV file of point coordinates (item,x1,...,xD) instead of --points")
	budget := fs.Int("budget", 10000, "number of answers to collect")
	errP := fs.Float64("error", 0, "probability that an annotator answers wrongly")
	annotators := fs.Int("annotators", 1, "annotators answering at the same time")
	repeats := fs.Int("repeats", 1, "answers wanted per comparison (landmark, basis; basis needs an odd number)")
	landmarks := fs.String("landmarks", "15", "landmark designs: the number of random landmarks, or a comma-separated list of landmark items (ids of --coords, else indices)")
	seed := fs.Uint64("seed", 1, "random seed (points, crowd, design, evaluation)")
	checkpoints := fs.String("checkpoints", "10", "K evenly spaced checkpoints up to the budget, or a comma-separated list of answer counts")
	csvOut := fs.Bool("csv", false, "print CSV: answers,fallback_share,d_hat,kendall_tau,knn_precision,heldout_error")
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// The points.
	var (
		x      *mat.Dense
		labels []int
		ids    []string
		err    error
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
		if *designName == "basis" {
			return errors.New("--method kpca does not apply to --design basis (it is judged by its own coordinates, or --method tste)")
		}
	case "tste":
		est.Method = simulate.TSTE
	default:
		return fmt.Errorf("--method %q: want kpca or tste", *method)
	}
	if set["extra"] && *designName != "basis" {
		return errors.New("--extra applies to --design basis only")
	}
	if set["coordinates"] && *designName != "basis" {
		return errors.New("--coordinates applies to --design basis only")
	}
	for _, f := range []string{"warmup", "model", "score", "candidates", "pool", "refit-every"} {
		if set[f] && *designName != "active" {
			return fmt.Errorf("--%s applies to --design active only", f)
		}
	}

	// The design.
	var d design.Design
	var about string
	var worker *simulate.Worker
	switch *designName {
	case "random":
		r, err := landmark.NewRandom(n, mix(*seed, 2))
		if err != nil {
			return err
		}
		d, about = r, "random questions"
	case "landmark-k1", "landmark-k2":
		v := landmark.K1
		if *designName == "landmark-k2" {
			v, est.Kind = landmark.K2, kernel.K2
		}
		cfg := landmark.Config{Variant: v, Repeats: *repeats, Seed: mix(*seed, 2)}
		if cfg.Landmarks, cfg.NumLandmarks, err = parseLandmarks(*landmarks, ids, n); err != nil {
			return err
		}
		ld, err := landmark.New(n, cfg)
		if err != nil {
			return err
		}
		d = ld
		if est.Method == simulate.KernelPCA {
			est.Landmarks = ld.Landmarks()
			est.Keep = func(t triplet.Triplet) bool { _, ok := ld.Index(triplet.KeyOf(t)); return ok }
		}
		about = fmt.Sprintf("landmark %v, %d landmarks, %d comparisons × %d repeats = %d answers to cover", v, len(ld.Landmarks()), ld.Comparisons(), ld.Repeats(), ld.Size())
	case "basis":
		cfg := basis.Config{Seed: mix(*seed, 2), Repeats: *repeats, Extra: *extra, Coordinates: *coordRule}
		if err := cfg.Validate(); err != nil {
			return err
		}
		d = basis.New(n, cfg)
		about = fmt.Sprintf("adaptive basis discovery, repeats %d, extra %v, coordinates %s", *repeats, *extra, *coordRule)
		if *method == "" {
			est.Method = ""
		}
	case "active":
		ad, w, err := activeDesign(n, *dim, mix(*seed, 2), mix(*seed, 6), *warmup, *model, *score, *candidates, *pool, *refitEvery, *repeats)
		if err != nil {
			return err
		}
		d, worker = ad, w
		c := ad.Config()
		about = fmt.Sprintf("active, %s scores under the %s model, warm-up %d answers, pool %d (best of %d pairs per head), refit every %d answers",
			c.Score.Rule, *model, ad.Warmup(), c.Pool, *candidates, w.Every)
	default:
		return fmt.Errorf("--design %q: want random, landmark-k1, landmark-k2, basis or active", *designName)
	}
	// Settings another design ignores are allowed, so that one command
	// line can be rerun with a different --design, but said.
	if set["landmarks"] && !strings.HasPrefix(*designName, "landmark") {
		fmt.Fprintf(stderr, "closer simulate: note: --landmarks does not apply to --design %s\n", *designName)
	}
	if set["repeats"] && *designName == "random" {
		fmt.Fprintln(stderr, "closer simulate: note: --repeats does not apply to --design random (every random question is new)")
	}

	truth := simulate.Truth{X: x, Labels: labels, Heldout: simulate.Heldout(x, heldoutSize, mix(*seed, 4))}
	crowd := simulate.Crowd{Oracle: triplet.NewOracle(x, *errP, mix(*seed, 1)), Annotators: *annotators, Seed: mix(*seed, 3)}

	var (
		tw *tabwriter.Writer
		cw *csvsafe.Writer // its cells are all numbers; every CSV closer writes goes through csvsafe
	)
	if *csvOut {
		cw = csvsafe.NewWriter(stdout)
		cw.Write([]string{"answers", "fallback_share", "d_hat", "kendall_tau", "knn_precision", "heldout_error"})
	} else {
		fmt.Fprintf(stdout, "# %d points in %d dimensions; %s; error %g; %d annotators; seed %d\n", n, D, about, *errP, *annotators, *seed)
		if labels != nil && n <= simulate.MaxPurityItems {
			k := 0
			for _, l := range labels {
				k = max(k, l+1)
			}
			fmt.Fprintf(stdout, "# baseline: k-means on the true points, purity %.4f\n",
				kernel.Purity(kernel.KMeans(x, k, 5, mix(*seed, 5)), labels))
		}
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "answers\tfallback\td̂\ttau\tknn\theldout\tpurity\tused\t\n")
	}
	stats, err := simulate.RunWithWorker(ctx, d, crowd, worker, *budget, cps, func(cp simulate.Checkpoint) error {
		q, err := simulate.Assess(ctx, cp, truth, est)
		if err != nil {
			return err
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
	if tw != nil {
		tw.Flush()
	}
	if cw != nil {
		cw.Flush()
	}
	if err != nil {
		return err
	}
	if !*csvOut {
		fmt.Fprintf(stdout, "# %d rounds; %d fallback answers; design done: %v; most times one comparison was handed out: %d\n",
			stats.Rounds, stats.Fallbacks, d.Done(), stats.MaxHanded)
		if stats.Fits > 0 {
			fmt.Fprintf(stdout, "# the worker refitted the embedding %d times\n", stats.Fits)
		}
		if ld, ok := d.(*landmark.Design); ok {
			p := ld.Progress()
			fmt.Fprintf(stdout, "# coverage %d of %d answers (%.1f%%), %d of %d comparisons fully answered\n",
				p.Answered, p.Needed, 100*p.Fraction(), p.Covered, p.Comparisons)
		}
	}
	return nil
}

// activeDesign builds the active design and the worker that refits its
// embedding (t-STE, or CKL for the CKL model, in dim dimensions,
// warm-started from the previous fit) from the flags.
func activeDesign(n, dim int, seed, fitSeed uint64, warmup int, modelName, scoreName string, candidates, pool, refitEvery, repeats int) (*active.Design, *simulate.Worker, error) {
	m, err := active.ParseModel(modelName)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	rule, err := active.ParseRule(scoreName)
	if err != nil {
		return nil, nil, fmt.Errorf("--score: %w", err)
	}
	switch {
	case warmup < 1 || warmup > active.MaxWarmupPerItem:
		return nil, nil, fmt.Errorf("--warmup %d: want 1..%d answers per item", warmup, active.MaxWarmupPerItem)
	case candidates < 1 || candidates > active.MaxCandidates:
		return nil, nil, fmt.Errorf("--candidates %d: want 1..%d", candidates, active.MaxCandidates)
	case pool < 0 || pool > active.MaxPool:
		return nil, nil, fmt.Errorf("--pool %d: want 1..%d", pool, active.MaxPool)
	case refitEvery < 0:
		return nil, nil, fmt.Errorf("--refit-every %d: want at least 1", refitEvery)
	case repeats > active.MaxRepeats:
		return nil, nil, fmt.Errorf("--repeats %d: want 1..%d", repeats, active.MaxRepeats)
	}
	d, err := active.New(n, active.Config{Seed: seed, WarmupPerItem: warmup, Pool: pool, Repeats: repeats,
		Score: active.ScoreConfig{Model: m, Rule: rule, Candidates: candidates}})
	if err != nil {
		return nil, nil, err
	}
	if refitEvery == 0 {
		refitEvery = d.Config().Pool
	}
	method := embed.TSTE
	if m == active.CKL {
		method = embed.CKL
	}
	w := &simulate.Worker{Every: refitEvery, Fit: func(ctx context.Context, ts []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error) {
		res, err := embed.Fit(ctx, n, ts, embed.Options{Method: method, Dim: dim, Seed: fitSeed, Init: prev})
		if err != nil {
			return nil, err
		}
		return res.X, nil
	}}
	return d, w, nil
}

// mix derives an independent seed for one use of the run's seed.
func mix(seed, use uint64) uint64 {
	z := seed + use*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

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
