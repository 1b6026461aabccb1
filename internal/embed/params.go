package embed

import (
	"context"
	"fmt"
	"math"

	"github.com/closer-lab/closer/internal/triplet"
)

// Params are one method's own knobs, as gonum's optimizers carry theirs:
// each method has its type (TSTEParams, STEParams, GNMDSParams, CKLParams,
// SOEParams, DMOEParams), a zero field takes the default its comment gives,
// and the type alone decides how the method is run. Options.Params nil
// means the defaults of Options.Method.
type Params interface {
	// Method is the method the parameters configure.
	Method() Method
	// withDefaults fills the zero fields; dim is the embedding dimension.
	withDefaults(dim int) Params
	validate() error
	// loopDefaults are the method's defaults for the shared Options fields
	// MaxIter, Tol and InitScale.
	loopDefaults() (maxIter int, tol, initScale float64)
	fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error)
}

// pointParams are the methods that minimise a mean loss over the triplets
// on the points X with L-BFGS (fitPoints).
type pointParams interface {
	Params
	// loss returns the per-chunk loss and the regulariser's weight λ.
	loss() (chunkFunc, float64)
	// starts is the number of initialisations whose best (lowest loss) is
	// kept, for an embedding of dimension dim.
	starts(dim int) int
}

// The point methods' loop defaults: at most 1000 L-BFGS iterations, a
// relative tolerance of 1e-6, and a start of scale 1e-4 as in van der
// Maaten's code (methods whose μ or margin is absolute start at scale 1).
const (
	pointMaxIter       = 1000
	pointTol           = 1e-6
	smallInitScale     = 1e-4
	absoluteInitScale  = 1.0
	defaultHingeMargin = 1.0
	defaultTSTELambda  = 0.001
)

// The default numbers of starts (Options.Starts 0): the DefaultStart (or
// Options.Start) and random ones, the fit with the fewest wrong training
// triplets kept (fitPoints).
//
//   - In one dimension (oneDimStarts, every method but SOE) points cannot
//     pass each other, so a fit keeps much of its start's order, and a 1-D
//     fit of data that are not 1-D (a square) has several orders of similar
//     loss of which the MDS start's is not always the best (held-out error
//     .274 against .261 for STE on the 300-item square of
//     TestReproduceStarts). One-dimensional fits are the cheapest.
//   - In two dimensions and more (heavyStarts, t-STE and CKL) the MDS start
//     alone is within 0.003 of the best of five random starts on the random
//     answers of TestReproduceStarts, but not on the answers an active
//     design collects: on the 3-D active arm of the simulator's
//     TestArmsActiveBeatsRandom the MDS start ends at held-out error .075
//     (training error .122) where every random start tried reaches .039
//     (.087). STE and GNMDS, whose regularised Gaussian and hinge losses
//     gave every start within 0.003 of each other, run once.
const (
	oneDimStarts = 5
	heavyStarts  = 3
)

// lineStarts is the default number of starts of STE and GNMDS.
func lineStarts(dim int) int {
	if dim == 1 {
		return oneDimStarts
	}
	return 1
}

// heavyTailStarts is the default number of starts of t-STE and CKL.
func heavyTailStarts(dim int) int {
	if dim == 1 {
		return oneDimStarts
	}
	return heavyStarts
}

// regulariser returns the weight λ for a given value: the default for 0,
// none (0) for a negative value.
func regulariser(lambda, def float64) float64 {
	switch {
	case lambda < 0:
		return 0
	case lambda == 0:
		return def
	}
	return lambda
}

func checkLambda(lambda float64) error {
	if !(lambda >= 0) {
		return fmt.Errorf("lambda %g must not be negative", lambda)
	}
	return nil
}

func checkMargin(margin float64) error {
	if !(margin > 0) {
		return fmt.Errorf("margin %g must be positive", margin)
	}
	return nil
}

// TSTEParams configure t-STE (van der Maaten and Weinberger 2012, sec. 4,
// the Student-t kernel).
//
// Unlike STE, t-STE's loss has no minimum at a finite scale: scaling X by
// s, a satisfied triplet's −log p_ijl = log(1 + ((α+s²d_ij)/(α+s²d_il))^((α+1)/2))
// falls monotonically towards log(1 + (d_ij/d_il)^((α+1)/2)) as s grows —
// the "nearly constant reward for triplets that are satisfied with a large
// margin" of sec. 4, whose repulsion on x_l "even when the triplet
// constraint is satisfied" never ends. Once most triplets are satisfied
// the loss keeps decreasing as the points spread (by O(1/s²)), so an
// unregularised fit stops wherever the tolerance lets it: raw radii of 10³
// to 10⁶ (docs/reproductions.md, issue 28). The default λ > 0 adds the
// paper's regulariser in X-form — the trace norm trace(K) = ‖X‖²_F of GNMDS
// and of the convex STE (sec. 3 and 4), which van der Maaten's released
// t-STE code also carries as λ·Σ X² — and gives the loss a minimum at a
// finite radius, growing like ((m/n)/λ)^(1/4) with the number m of
// triplets per item.
type TSTEParams struct {
	// Alpha is the degrees of freedom (default max(Dim−1, 1)).
	Alpha float64
	// Lambda weights ‖X‖²_F in (1/m)·(Σ_t ℓ_t + λ‖X‖²_F) (default
	// 0.001; a negative value means none, and the scale then runs away).
	// The default is the smallest of 0.001, 0.01, 0.1, 1 scanned
	// (docs/embeddings.md, "t-STE's scale"): it bounds the raw radius (5 to
	// 21 on every set measured, against 10³–10⁶ without) and leaves the
	// held-out error within 0.002 of λ = 0 on the Table 1 setting, the
	// strange fruit and simulated sets; larger values shrink the radius
	// further and cost accuracy where the answers are noise-free (Basis+Extra
	// triplets of 3dgmm, mean τ .81 at λ = 0.001, .63 at λ = 0.1).
	Lambda float64
}

func (TSTEParams) Method() Method { return TSTE }

func (p TSTEParams) withDefaults(dim int) Params {
	if p.Alpha == 0 {
		p.Alpha = math.Max(float64(dim-1), 1)
	}
	p.Lambda = regulariser(p.Lambda, defaultTSTELambda)
	return p
}

func (p TSTEParams) validate() error {
	if !(p.Alpha > 0) {
		return fmt.Errorf("t-STE alpha %g must be positive", p.Alpha)
	}
	return checkLambda(p.Lambda)
}

func (TSTEParams) loopDefaults() (int, float64, float64) {
	return pointMaxIter, pointTol, smallInitScale
}

func (p TSTEParams) loss() (chunkFunc, float64) { return tsteChunk(p.Alpha), p.Lambda }
func (TSTEParams) starts(dim int) int           { return heavyTailStarts(dim) }

func (p TSTEParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitPoints(ctx, n, ts, opt, p)
}

// STEParams configure STE (van der Maaten and Weinberger 2012, sec. 4, the
// Gaussian kernel).
type STEParams struct {
	// Lambda weights ‖X‖²_F (default 2, chosen on the DMOE Table 1
	// setting; a negative value means 0).
	Lambda float64
}

func (STEParams) Method() Method { return STE }

func (p STEParams) withDefaults(int) Params {
	p.Lambda = regulariser(p.Lambda, 2)
	return p
}

func (p STEParams) validate() error { return checkLambda(p.Lambda) }

func (STEParams) loopDefaults() (int, float64, float64) {
	return pointMaxIter, pointTol, smallInitScale
}

func (p STEParams) loss() (chunkFunc, float64) { return steChunk, p.Lambda }
func (STEParams) starts(dim int) int           { return lineStarts(dim) }

func (p STEParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitPoints(ctx, n, ts, opt, p)
}

// GNMDSParams configure GNMDS: the hinge on squared distances with a trace
// regulariser, the X-form of the program in sec. 3 of van der Maaten and
// Weinberger 2012 (Agarwal et al. 2007).
type GNMDSParams struct {
	// Lambda weights trace(K) = ‖X‖²_F; λ = 1/C of the paper's program
	// (default 3, chosen on the DMOE Table 1 setting; negative means 0).
	Lambda float64
	// Margin is the hinge margin (default 1).
	Margin float64
}

func (GNMDSParams) Method() Method { return GNMDS }

func (p GNMDSParams) withDefaults(int) Params {
	p.Lambda = regulariser(p.Lambda, 3)
	if p.Margin == 0 {
		p.Margin = defaultHingeMargin
	}
	return p
}

func (p GNMDSParams) validate() error {
	if err := checkMargin(p.Margin); err != nil {
		return err
	}
	return checkLambda(p.Lambda)
}

func (GNMDSParams) loopDefaults() (int, float64, float64) {
	return pointMaxIter, pointTol, smallInitScale
}

func (p GNMDSParams) loss() (chunkFunc, float64) { return gnmdsChunk(p.Margin), p.Lambda }
func (GNMDSParams) starts(dim int) int           { return lineStarts(dim) }

func (p GNMDSParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitPoints(ctx, n, ts, opt, p)
}

// CKLParams configure CKL, the crowd-kernel log-loss (van der Maaten and
// Weinberger 2012, sec. 3).
type CKLParams struct {
	// Lambda weights ‖X‖²_F (default 1, chosen on the DMOE Table 1
	// setting; negative means 0).
	Lambda float64
	// Mu is the regulariser μ inside the probabilities (default 0.1).
	Mu float64
}

func (CKLParams) Method() Method { return CKL }

func (p CKLParams) withDefaults(int) Params {
	p.Lambda = regulariser(p.Lambda, 1)
	if p.Mu == 0 {
		p.Mu = 0.1
	}
	return p
}

func (p CKLParams) validate() error {
	if !(p.Mu > 0) {
		return fmt.Errorf("CKL mu %g must be positive", p.Mu)
	}
	return checkLambda(p.Lambda)
}

// CKL's μ is absolute, so its start has scale 1.
func (CKLParams) loopDefaults() (int, float64, float64) {
	return pointMaxIter, pointTol, absoluteInitScale
}

func (p CKLParams) loss() (chunkFunc, float64) { return cklChunk(p.Mu), p.Lambda }
func (CKLParams) starts(dim int) int           { return heavyTailStarts(dim) }

func (p CKLParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitPoints(ctx, n, ts, opt, p)
}

// SOEParams configure SOE, soft ordinal embedding (Terada and von Luxburg
// 2014): the squared hinge on unsquared distances, no regulariser, the best
// of several random starts.
type SOEParams struct {
	// Margin is the hinge margin δ (default 0.1).
	Margin float64
	// Inits is the number of initialisations, the best kept (default 4;
	// one with a warm start Options.Init). The first uses Options.Start,
	// the others are random.
	Inits int
}

func (SOEParams) Method() Method { return SOE }

func (p SOEParams) withDefaults(int) Params {
	if p.Margin == 0 {
		p.Margin = 0.1
	}
	if p.Inits == 0 {
		p.Inits = 4
	}
	return p
}

func (p SOEParams) validate() error {
	if p.Inits < 1 {
		return fmt.Errorf("SOE initialisations %d < 1", p.Inits)
	}
	return checkMargin(p.Margin)
}

// SOE's margin is absolute, so its start has scale 1.
func (SOEParams) loopDefaults() (int, float64, float64) {
	return pointMaxIter, pointTol, absoluteInitScale
}

func (p SOEParams) loss() (chunkFunc, float64) { return soeChunk(p.Margin), 0 }
func (p SOEParams) starts(int) int             { return p.Inits }

func (p SOEParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitPoints(ctx, n, ts, opt, p)
}

// DMOEParams configure DMOE (Ma et al. 2019): the distributional-margin
// loss (eq. 15-16) on the Gram matrix, solved by the ADMM of Algorithm 1.
type DMOEParams struct {
	// Lambda weights the nuclear norm in (23) relative to λ_max, the
	// largest eigenvalue of Σ_t K_t, above which G = 0 is optimal (default
	// 0.3; negative means 0).
	Lambda float64
	// Margin is the target margin mean γ̃0 (default 1).
	Margin float64
	// Nu is the weight ν on margins above the target (eq. 16, default 1).
	Nu float64
	// Penalty is the initial ADMM penalty μ (default 0.1) and Rho its
	// growth factor per iteration (default 1.05), capped at 1e5.
	Penalty, Rho float64
	// PaperStop stops the ADMM by Ma et al.'s rule instead of at
	// convergence: as soon as the objective, per triplet as in (15),
	// changes by less than 0.001 between two successive iterations
	// (Algorithm 1 and the sentence after it). On the paper's synthetic
	// setting this stops after 4–13 iterations, and the Gram matrix it
	// leaves reproduces the paper's Table 1; on other data an embedding in
	// few dimensions is better converged (docs/embeddings.md).
	PaperStop bool
}

func (DMOEParams) Method() Method { return DMOE }

func (p DMOEParams) withDefaults(int) Params {
	p.Lambda = regulariser(p.Lambda, 0.3)
	if p.Margin == 0 {
		p.Margin = defaultHingeMargin
	}
	if p.Nu == 0 {
		p.Nu = 1
	}
	if p.Penalty == 0 {
		p.Penalty = 0.1
	}
	if p.Rho == 0 {
		p.Rho = 1.05
	}
	return p
}

func (p DMOEParams) validate() error {
	switch {
	case p.Nu < 0:
		return fmt.Errorf("DMOE nu %g must not be negative", p.Nu)
	case !(p.Penalty > 0) || !(p.Rho >= 1):
		return fmt.Errorf("DMOE penalty %g must be positive and rho %g at least 1", p.Penalty, p.Rho)
	}
	if err := checkMargin(p.Margin); err != nil {
		return err
	}
	return checkLambda(p.Lambda)
}

// DMOE runs at most 300 ADMM iterations with a relative tolerance of 1e-4.
func (DMOEParams) loopDefaults() (int, float64, float64) { return 300, 1e-4, smallInitScale }

func (p DMOEParams) fit(ctx context.Context, n int, ts []triplet.Triplet, opt Options) (*Result, error) {
	return fitDMOE(ctx, n, ts, opt, p)
}
