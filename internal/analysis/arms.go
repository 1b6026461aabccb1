package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// ArmFit is one arm's embedding judged on the study's held-out answers
// (issue 16): the arm's learning-curve point.
type ArmFit struct {
	// Embedding is the fit at its own scale, not embed.Normalize's normal
	// form: it is never shown, and the active design's answer model (t-STE
	// or CKL probabilities) reads its distances as the fit left them.
	Embedding  *mat.Dense // n × Dim
	Iterations int
	// Loss is the fit's final loss; Warm says it started from the
	// previous fit (which ended lower than the default start).
	Loss float64
	Warm bool
	// TrainError is the triplet error on the arm's own answers.
	TrainError float64
	// Heldout counts the held-out answers judged, Wrong those the fit
	// gets wrong (a tie counts as wrong, as embed.TripletError does);
	// HeldoutError is Wrong / Heldout (NaN without held-out answers).
	Heldout, Wrong int
	HeldoutError   float64
}

// FitArm fits the answers of one arm of a study over n items with the
// study's method and dimensions (s.Method, s.Dim, s.Seed, s.MaxIter) and
// judges the fit on the study's held-out answers. None of the arm's own
// answers is held out: the held-out answers, asked apart from every
// design, are the test set every arm is judged on, so the arms' errors
// compare.
//
// The fit starts from the default start (embed.DefaultStart) and, given
// prev (n × Dim, the arm's previous fit), also from prev; the one with the
// lower loss is kept (Warm says it was prev's). A warm start alone is cheaper but makes
// the curve depend on its history: a poor early fit (few answers, a fold
// in two dimensions) can trap every later one near it, and an arm's curve
// then stays flat while its answers would place the items well.
func FitArm(ctx context.Context, n int, answers, heldout []triplet.Triplet, s Settings, prev *mat.Dense) (*ArmFit, error) {
	s = s.withDefaults()
	if len(answers) == 0 {
		return nil, errors.New("arm fit: no answers")
	}
	opt := embed.Options{Method: s.Method, Dim: s.Dim, Seed: s.Seed, MaxIter: s.MaxIter}
	fit, err := embed.Fit(ctx, n, answers, opt)
	if err != nil {
		return nil, fmt.Errorf("arm fit: %w", err)
	}
	warm := false
	if prev != nil {
		if r, c := prev.Dims(); r == n && c == s.Dim {
			opt.Init = prev
			w, err := embed.Fit(ctx, n, answers, opt)
			if err != nil {
				return nil, fmt.Errorf("arm fit: %w", err)
			}
			if w.Loss < fit.Loss {
				fit, warm = w, true
			}
		}
	}
	out := &ArmFit{Embedding: fit.X, Iterations: fit.Iterations, Loss: fit.Loss, Warm: warm,
		TrainError: embed.TripletError(fit.X, answers),
		Heldout:    len(heldout), Wrong: Wrong(fit.X, heldout), HeldoutError: math.NaN()}
	if out.Heldout > 0 {
		out.HeldoutError = float64(out.Wrong) / float64(out.Heldout)
	}
	return out, nil
}

// Wrong counts the triplets the points x get wrong: d(a, closer) is not
// below d(a, farther) (ties count as wrong). Triplets over items x does
// not have are counted wrong too.
func Wrong(x *mat.Dense, ts []triplet.Triplet) int {
	n, _ := x.Dims()
	wrong := 0
	for _, t := range ts {
		if t.Valid(n) != nil || !(triplet.SqDist(x, t.Anchor, t.Closer) < triplet.SqDist(x, t.Anchor, t.Farther)) {
			wrong++
		}
	}
	return wrong
}
