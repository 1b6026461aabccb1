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
	"math"
	"runtime"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// Method names an embedding algorithm.
type Method string

// The embedding methods.
const (
	TSTE  Method = "tste"
	STE   Method = "ste"
	GNMDS Method = "gnmds"
	CKL   Method = "ckl"
	SOE   Method = "soe"
	DMOE  Method = "dmoe"
)

// Methods lists every method, in the order used by reports.
var Methods = []Method{TSTE, STE, GNMDS, CKL, SOE, DMOE}

// ParseMethod returns the method named s (case as in the constants).
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown method %q (want one of %s)", s, strings.Join(MethodNames(), ", "))
}

// MethodNames returns the names of Methods, in their order: what settings,
// forms and flags accept.
func MethodNames() []string {
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m)
	}
	return names
}

// Options configures Fit. Zero values select the defaults given per field.
type Options struct {
	// Method is the algorithm (default TSTE).
	Method Method
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
	// Start chooses the start when Init is nil (default StartRandom). For
	// SOE it is the first initialisation's; the others are random.
	Start Start
	// Progress, when set, is called once per iteration with the iteration
	// number (counting from 1, across SOE's initialisations) and the loss.
	Progress func(iter int, loss float64)

	// Alpha is t-STE's degrees of freedom (default max(Dim-1, 1)).
	Alpha float64
	// Lambda weights the regulariser. STE, t-STE, CKL and GNMDS minimise
	// (1/m)·(Σ_t ℓ_t + λ‖X‖²_F) over the m triplets (for GNMDS ‖X‖²_F =
	// trace(K) and λ = 1/C of the paper's program); defaults 2 for STE, 1 for
	// CKL, 0 for t-STE, 3 for GNMDS, chosen on the DMOE Table 1 setting.
	// For DMOE λ weights the nuclear norm in (23) relative to λ_max, the
	// largest eigenvalue of Σ_t K_t, above which G = 0 is optimal (default
	// 0.3). SOE has no regulariser. A negative Lambda means λ = 0.
	Lambda float64
	// Mu is CKL's μ (default 0.1).
	Mu float64
	// Margin is the hinge margin: GNMDS 1, SOE 0.1, DMOE's target margin
	// mean γ̃0 1 (the defaults).
	Margin float64
	// Inits is the number of SOE random initialisations (default 4).
	Inits int
	// Nu is DMOE's weight ν on margins above the target (eq. 16, default 1).
	Nu float64
	// PaperStop (DMOE only) stops the ADMM by Ma et al.'s rule instead of
	// at convergence: as soon as the objective, per triplet as in (15),
	// changes by less than 0.001 between two successive iterations
	// (Algorithm 1 and the sentence after it). On the paper's synthetic
	// setting this stops after 4–13 iterations, and the Gram matrix it
	// leaves reproduces the paper's Table 1; on other data an embedding in
	// few dimensions is better converged (docs/embeddings.md).
	PaperStop bool
	// Penalty is DMOE's initial ADMM penalty μ (default 0.1) and Rho its
	// growth factor per iteration (default 1.05), capped at 1e5.
	Penalty, Rho float64
	// InitScale is the standard deviation of the seeded Gaussian start
	// (default 1e-4 as in van der Maaten's code; 1 for CKL and SOE, whose
	// μ and margin are absolute).
	InitScale float64
	// Workers bounds the goroutines evaluating a loss (default GOMAXPROCS).
	// It never changes the result.
	Workers int
}

// Result is a fitted embedding.
type Result struct {
	// X holds the points, one row per item, centred at the origin.
	X *mat.Dense
	// Loss is the final value of the method's objective: the mean loss plus
	// regulariser for the point methods (for SOE that of the best
	// initialisation), the summed objective (23) at the final PSD iterate
	// for DMOE.
	Loss float64
	// Iterations is the number of optimiser iterations run (summed over
	// SOE's initialisations).
	Iterations int
	// Evaluations counts the evaluations of the loss and its gradient (0
	// for DMOE).
	Evaluations int
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Method == "" {
		o.Method = TSTE
	}
	if o.Dim == 0 {
		o.Dim = 2
	}
	if o.MaxIter == 0 {
		o.MaxIter = 1000
		if o.Method == DMOE {
			o.MaxIter = 300
		}
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
		if o.Method == DMOE {
			o.Tol = 1e-4
		}
	}
	if o.Alpha == 0 {
		o.Alpha = math.Max(float64(o.Dim-1), 1)
	}
	if o.Lambda < 0 {
		o.Lambda = 0
	} else if o.Lambda == 0 {
		switch o.Method {
		case STE:
			o.Lambda = 2
		case CKL:
			o.Lambda = 1
		case GNMDS:
			o.Lambda = 3
		case DMOE:
			o.Lambda = 0.3
		}
	}
	if o.Mu == 0 {
		o.Mu = 0.1
	}
	if o.Margin == 0 {
		switch o.Method {
		case SOE:
			o.Margin = 0.1
		default:
			o.Margin = 1
		}
	}
	if o.Inits == 0 {
		o.Inits = 4
	}
	if o.Nu == 0 {
		o.Nu = 1
	}
	if o.Penalty == 0 {
		o.Penalty = 0.1
	}
	if o.Rho == 0 {
		o.Rho = 1.05
	}
	if o.InitScale == 0 {
		switch o.Method {
		case CKL, SOE:
			o.InitScale = 1
		default:
			o.InitScale = 1e-4
		}
	}
	if o.Start == "" {
		o.Start = StartRandom
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
	if _, err := ParseStart(string(o.Start)); err != nil {
		return err
	}
	switch {
	case o.Dim < 1:
		return fmt.Errorf("dimension %d < 1", o.Dim)
	case o.MaxIter < 1:
		return fmt.Errorf("iteration cap %d < 1", o.MaxIter)
	case !(o.Tol > 0):
		return fmt.Errorf("tolerance %g must be positive", o.Tol)
	case !(o.Alpha > 0):
		return fmt.Errorf("t-STE alpha %g must be positive", o.Alpha)
	case o.Lambda < 0:
		return fmt.Errorf("lambda %g must not be negative", o.Lambda)
	case !(o.Mu > 0):
		return fmt.Errorf("CKL mu %g must be positive", o.Mu)
	case !(o.Margin > 0):
		return fmt.Errorf("margin %g must be positive", o.Margin)
	case o.Inits < 1:
		return fmt.Errorf("SOE initialisations %d < 1", o.Inits)
	case o.Nu < 0:
		return fmt.Errorf("DMOE nu %g must not be negative", o.Nu)
	case !(o.Penalty > 0) || !(o.Rho >= 1):
		return fmt.Errorf("DMOE penalty %g must be positive and rho %g at least 1", o.Penalty, o.Rho)
	case !(o.InitScale > 0):
		return fmt.Errorf("initial scale %g must be positive", o.InitScale)
	}
	return nil
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
	var (
		res *Result
		err error
	)
	if opt.Method == DMOE {
		res, err = fitDMOE(ctx, n, ts, opt)
	} else {
		res, err = fitPoints(ctx, n, ts, opt)
	}
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
