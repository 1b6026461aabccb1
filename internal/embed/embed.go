// Package embed learns ordinal embeddings from similarity triplets and
// judges them.
//
// Methods (all learn the points X directly, except DMOE which learns the
// Gram matrix):
//
//   - STE and t-STE: van der Maaten and Weinberger 2012, sec. 4 (the
//     probabilities p_ijl for the Gaussian and the Student-t kernel).
//   - GNMDS: hinge on squared distances with margin 1 and a trace
//     regulariser, the X-form of the GNMDS program in sec. 3 of the same
//     paper (Agarwal et al. 2007).
//   - CKL: the crowd-kernel log-loss with the regulariser μ (sec. 3).
//   - SOE: soft ordinal embedding (Terada and von Luxburg 2014), the squared
//     hinge on (unsquared) distances with margin 0.1, several random
//     initialisations, the best kept.
//   - DMOE: Ma et al. 2019, the distributional-margin loss (eq. 15-16)
//     solved by the ADMM of Algorithm 1 on the Gram matrix.
//
// The point methods minimise a mean loss over the triplets with L-BFGS
// (gonum/optimize), keep the best iterate, and evaluate the loss and its
// gradient over fixed chunks of the triplets on all cores; the per-chunk
// partial sums are added in chunk order, so a result depends only on the
// input and the seed, never on the scheduling or the number of cores.
//
// The metrics (triplet error, leave-one-out nearest-neighbour error, mean
// Kendall tau, kNN precision, distance RMSE, Procrustes disparity) are in
// metrics.go.
package embed

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// Options configures Fit: the knobs every method shares, and the method's
// own in Params. Zero values select the defaults given per field.
type Options struct {
	// Method is the algorithm (default TSTE, or the method of Params).
	Method Method
	// Params holds the method's own knobs (nil: Method.Params(), the
	// method's defaults). Its method must be Method when both are set.
	Params Params
	// Dim is the embedding dimension (default 2).
	Dim int
	// Seed makes the random initialisation reproducible.
	Seed uint64
	// MaxIter caps the optimiser's iterations: L-BFGS iterations for the
	// point methods (per initialisation for SOE), ADMM iterations for DMOE.
	// Default 1000 (DMOE 300). The point methods also stop after 10·MaxIter
	// requests for the loss per initialisation (a sound run needs 1–1.5 per
	// iteration; a line search that cannot progress would ask forever) and
	// keep the best point seen.
	MaxIter int
	// Tol stops the optimiser when the loss has not improved by more than
	// Tol relative to its magnitude for 10 consecutive iterations (point
	// methods), or when the relative change of the DMOE objective between
	// two ADMM iterations is below Tol and the relative primal residual
	// ‖G − G1‖, ‖G − G2‖ below √Tol/10. Default 1e-6 (DMOE 1e-4).
	Tol float64
	// Init is a warm start: n × Dim points (nil: the start chosen by Start).
	Init *mat.Dense
	// Start chooses the start when Init is nil (default StartMDS). For
	// SOE it is the first initialisation's; the others are random.
	Start Start
	// Starts is the number of starts of a point method without Init, the
	// first from Start and the others random; the fit with the fewest
	// wrong training triplets is kept, ties by loss (0: the method's
	// default, 5 in one dimension; otherwise 3 for t-STE and CKL, 1 for STE
	// and GNMDS; SOE its Inits). DMOE is convex and ignores it.
	Starts int
	// InitScale is the standard deviation of the seeded Gaussian start
	// (default 1e-4 as in van der Maaten's code; 1 for CKL and SOE, whose
	// μ and margin are absolute).
	InitScale float64
	// Progress, when set, is called once per iteration with the iteration
	// number (counting from 1, across SOE's initialisations) and the loss.
	Progress func(iter int, loss float64)
	// Workers bounds the goroutines evaluating a loss (default GOMAXPROCS).
	// It never changes the result.
	Workers int
}

// Result is a fitted embedding.
type Result struct {
	// X holds the points, one row per item, centred at the origin, at the
	// method's own scale and orientation (the point where Loss was
	// measured); Normalize gives the normal form that is stored and shown.
	X *mat.Dense
	// Loss is the final value of the method's objective: the mean loss plus
	// regulariser for the point methods (with several starts, that of the
	// start kept), the summed objective (23) at the final PSD iterate
	// for DMOE.
	Loss float64
	// Iterations is the number of optimiser iterations run (summed over
	// SOE's initialisations).
	Iterations int
	// Evaluations counts the evaluations of the loss and its gradient (0
	// for DMOE).
	Evaluations int
}

// withDefaults fills the zero fields of o and of its Params. An unknown
// method is left for validate to report.
func (o Options) withDefaults() Options {
	switch {
	case o.Params == nil && o.Method == "":
		o.Method = DefaultMethod
		fallthrough
	case o.Params == nil:
		o.Params = o.Method.Params()
	case o.Method == "":
		o.Method = o.Params.Method()
	}
	if o.Dim == 0 {
		o.Dim = 2
	}
	if o.Params != nil {
		o.Params = o.Params.withDefaults(o.Dim)
		maxIter, tol, scale := o.Params.loopDefaults()
		if o.MaxIter == 0 {
			o.MaxIter = maxIter
		}
		if o.Tol == 0 {
			o.Tol = tol
		}
		if o.InitScale == 0 {
			o.InitScale = scale
		}
	}
	if o.Start == "" {
		o.Start = DefaultStart
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

func (o Options) validate() error {
	if _, err := ParseMethod(string(o.Method)); err != nil {
		return err
	}
	if o.Params == nil {
		return fmt.Errorf("no parameters for method %s", o.Method)
	}
	if m := o.Params.Method(); m != o.Method {
		return fmt.Errorf("parameters of method %s given for method %s", m, o.Method)
	}
	if _, err := ParseStart(string(o.Start)); err != nil {
		return err
	}
	switch {
	case o.Dim < 1:
		return fmt.Errorf("dimension %d < 1", o.Dim)
	case o.Starts < 0:
		return fmt.Errorf("starts %d < 0", o.Starts)
	case o.MaxIter < 1:
		return fmt.Errorf("iteration cap %d < 1", o.MaxIter)
	case !(o.Tol > 0):
		return fmt.Errorf("tolerance %g must be positive", o.Tol)
	case !(o.InitScale > 0):
		return fmt.Errorf("initial scale %g must be positive", o.InitScale)
	}
	return o.Params.validate()
}

// Fit learns an embedding of n items from the triplets ts with the method
// and parameters in opt. It returns an error for bad input (a triplet
// outside 0..n-1, no triplets, bad options) and, wrapped, ctx.Err() when
// ctx is cancelled; the result is then nil.
func Fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if n < 3 {
		return nil, fmt.Errorf("embed %s: need at least 3 items, have %d", opt.Method, n)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("embed %s: no triplets", opt.Method)
	}
	for k, t := range ts {
		if err := t.Valid(n); err != nil {
			return nil, fmt.Errorf("embed %s: triplet %d: %w", opt.Method, k, err)
		}
	}
	if opt.Init != nil {
		r, c := opt.Init.Dims()
		if r != n || c != opt.Dim {
			return nil, fmt.Errorf("embed %s: warm start is %d×%d, want %d×%d", opt.Method, r, c, n, opt.Dim)
		}
	}
	res, err := opt.Params.fit(ctx, n, ts, opt)
	if err != nil {
		return nil, fmt.Errorf("embed %s: %w", opt.Method, err)
	}
	centre(res.X)
	return res, nil
}

// flatten stores triplets as a flat int32 array anchor, closer, farther, ...
func flatten(ts []triplet.Triplet) []int32 {
	tr := make([]int32, 3*len(ts))
	for k, t := range ts {
		tr[3*k], tr[3*k+1], tr[3*k+2] = int32(t.Anchor), int32(t.Closer), int32(t.Farther)
	}
	return tr
}

// startPoints returns the warm start or the start chosen by opt.Start.
func startPoints(n int, ts []triplet.Triplet, opt Options, seed uint64) []float64 {
	x := make([]float64, n*opt.Dim)
	if opt.Init != nil {
		for i := range n {
			copy(x[i*opt.Dim:(i+1)*opt.Dim], opt.Init.RawRowView(i))
		}
		return x
	}
	return initialPoints(n, ts, opt, seed)
}

// centre subtracts the column means of x.
func centre(x *mat.Dense) {
	n, d := x.Dims()
	for c := range d {
		var s float64
		for i := range n {
			s += x.At(i, c)
		}
		s /= float64(n)
		for i := range n {
			x.Set(i, c, x.At(i, c)-s)
		}
	}
}

// errStopped marks a stop requested through the context.
var errStopped = errors.New("stopped")
