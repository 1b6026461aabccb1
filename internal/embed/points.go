package embed

import (
	"context"
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/closer-lab/closer/internal/triplet"
)

// patience is how many consecutive iterations without a relative
// improvement of Tol end an L-BFGS run.
const patience = 10

// evalsPerIter bounds the optimiser's requests for the loss from one start
// to evalsPerIter·MaxIter. A sound run asks for 1 to 1.5 per iteration (the
// More-Thuente line search mostly accepts its first step). A gradient that
// disagrees with the loss makes the line search spin: it can ask for the
// loss at the same point forever, which the evaluation cache makes cheap
// but endless; the bound turns that into a stop at the best point seen.
const evalsPerIter = 10

// fitPoints runs a point method: L-BFGS on X from the warm start alone, or
// from opt.Starts starts (0: p.starts(Dim)), the first from opt.Start and
// the others random, keeping the fit that gets the fewest training
// triplets wrong, ties broken by the lower loss. The training error, not
// the loss, decides because where the model does not fit (a 1-D fit of 2-D
// answers) fits of nearly equal loss order the items differently: for
// GNMDS on the 300-item square the lowest-loss start (0.71926) errs on .274
// of the held-out triplets, one of loss 0.71964 on .260, and the training
// error ranks them as the held-out error does (docs/embeddings.md, "Starts").
func fitPoints(ctx context.Context, n int, ts []triplet.Triplet, opt Options, p pointParams) (*Result, error) {
	f, lambda := p.loss()
	ev := newEvaluator(n, opt.Dim, flatten(ts), f, lambda, opt.Workers)
	return fitEvaluator(ctx, n, ts, ev, opt, p.starts(opt.Dim))
}

// fitEvaluator is fitPoints' loop over starts for the objective of ev:
// defStarts starts unless opt says otherwise, each begun as opt.Start
// (or Init) says from the triplets ts, the fit with the fewest wrong
// triplets of ts kept (ties by loss).
func fitEvaluator(ctx context.Context, n int, ts []triplet.Triplet, ev *evaluator, opt Options, defStarts int) (*Result, error) {
	inits := 1
	if opt.Init == nil {
		inits = opt.Starts
		if inits == 0 {
			inits = defStarts
		}
	}
	seeds := triplet.NewRand(opt.Seed)
	var best *Result
	var bestWrong float64
	total := 0
	for k := range inits {
		o := opt
		if k > 0 {
			// Further initialisations are random whatever the start.
			o.Start = StartRandom
		}
		x0 := startPoints(n, ts, o, seeds.Uint64())
		x, loss, iters, err := minimizeLBFGS(ctx, ev, x0, opt, total)
		total += iters
		if err != nil {
			return nil, err
		}
		res := &Result{X: mat.NewDense(n, opt.Dim, x), Loss: loss}
		var wrong float64 // the training error, when there is a choice
		if inits > 1 {
			wrong = TripletError(res.X, ts)
		}
		if best == nil || wrong < bestWrong || wrong == bestWrong && loss < best.Loss {
			best, bestWrong = res, wrong
		}
	}
	best.Iterations = total
	best.Evaluations = ev.evals
	return best, nil
}

// recorder reports progress and stops on cancellation at every major
// iteration of gonum's optimiser.
type recorder struct {
	ctx      context.Context
	progress func(int, float64)
	iter     *int
	base     int
}

func (r *recorder) Init() error { return nil }

func (r *recorder) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	if op != optimize.MajorIteration {
		return nil
	}
	*r.iter++
	if r.progress != nil {
		r.progress(r.base+*r.iter, loc.F)
	}
	if r.ctx.Err() != nil {
		return errStopped
	}
	return nil
}

// minimizeLBFGS minimises the evaluator's objective from x0 with L-BFGS
// (More-Thuente line search) for at most opt.MaxIter iterations and
// evalsPerIter·opt.MaxIter requests for the loss, and returns the best
// point seen. The loss and gradient are computed together and cached, since
// gonum asks for them separately at the same point. When the line search
// gives up (the hinge losses are not smooth) the run restarts from the best
// point with a fresh memory, as long as restarts still improve the loss.
// Cancellation of ctx is seen at every request, also inside a line search.
func minimizeLBFGS(ctx context.Context, ev *evaluator, x0 []float64, opt Options, base int) (best []float64, bestF float64, iters int, err error) {
	dim := len(x0)
	best = slices.Clone(x0)
	bestF = math.Inf(1)
	cacheX := make([]float64, dim)
	cacheG := make([]float64, dim)
	var cacheF float64
	cached := false
	compute := func(x []float64) {
		if cached && slices.Equal(x, cacheX) {
			return
		}
		copy(cacheX, x)
		cacheF = ev.eval(x, cacheG)
		cached = true
		if cacheF < bestF {
			bestF = cacheF
			copy(best, x)
		}
	}
	budget := evalsPerIter * opt.MaxIter
	requests := 0
	p := optimize.Problem{
		Func: func(x []float64) float64 { requests++; compute(x); return cacheF },
		Grad: func(g, x []float64) { compute(x); copy(g, cacheG) },
		// Status is asked after every evaluation (and once as a run starts).
		Status: func() (optimize.Status, error) {
			if ctx.Err() != nil {
				return optimize.Failure, errStopped
			}
			if requests >= budget {
				return optimize.FunctionEvaluationLimit, nil
			}
			return optimize.NotTerminated, nil
		},
	}
	defer func() { ev.requests += requests }()
	start := slices.Clone(x0)
	for restarts := 0; iters < opt.MaxIter && requests < budget; restarts++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, iters, err
		}
		before := bestF
		ran := 0
		settings := &optimize.Settings{
			MajorIterations: opt.MaxIter - iters,
			Converger:       &optimize.FunctionConverge{Relative: opt.Tol, Iterations: patience},
			Recorder:        &recorder{ctx: ctx, progress: opt.Progress, iter: &ran, base: base + iters},
		}
		res, merr := optimize.Minimize(p, start, settings, &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}})
		iters += ran
		if errors.Is(merr, errStopped) || ctx.Err() != nil {
			return nil, 0, iters, ctx.Err()
		}
		if merr == nil && res != nil && res.Status != optimize.Failure {
			break // converged, or the iteration cap was reached
		}
		// The line search failed: restart from the best point if the last
		// run still improved it noticeably.
		if !(before-bestF > opt.Tol*math.Abs(bestF)) || restarts >= 20 {
			break
		}
		copy(start, best)
	}
	if math.IsInf(bestF, 1) || math.IsNaN(bestF) {
		return nil, 0, iters, errors.New("the loss is not finite at the start")
	}
	return best, bestF, iters, nil
}
