package simulate

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/triplet"
)

// DesignSpec is a question design and its settings, as `closer simulate`'s
// flags and a study's design settings give them: the design (random,
// landmark-k1, landmark-k2, basis or active) for N items, with the settings
// that apply to it.
type DesignSpec struct {
	Design string
	// N is the number of items, Dim the dimension of the active design's
	// fits.
	N, Dim int
	// Repeats is the answers wanted per comparison (landmark, basis,
	// active).
	Repeats int
	// Landmarks are the landmark items, or NumLandmarks drawn at random
	// (landmark-k1, landmark-k2).
	Landmarks    []int
	NumLandmarks int
	// Extra and Coordinates are the basis design's.
	Extra       bool
	Coordinates string
	// Warmup (random answers per item), Model, Score, Candidates, Pool and
	// RefitEvery (answers between the worker's fits; 0: the pool size)
	// are the active design's.
	Warmup           int
	Model, Score     string
	Candidates, Pool int
	RefitEvery       int
	// Method is how the result is learned ("", "kpca" or "tste"): with ""
	// a basis design is judged by its own coordinates.
	Method string
}

// BuiltDesign is a design ready to run: its state machine, the worker of
// an active design, the estimator that judges it, and a line about it.
type BuiltDesign struct {
	Design design.Design
	Worker *Worker
	Est    Estimator
	About  string
}

// BuildDesign builds the design sp describes with the design's seed and the
// seed of its worker's fits, and adapts the estimator est to it
// (landmarks, kernel, the basis design's own coordinates). It is the
// construction `closer simulate` runs and the estimate before a study
// opens (internal/estimate) simulates.
func BuildDesign(sp DesignSpec, est Estimator, seed, fitSeed uint64) (BuiltDesign, error) {
	var b BuiltDesign
	n := sp.N
	switch sp.Design {
	case "random":
		r, err := landmark.NewRandom(n, seed)
		if err != nil {
			return b, err
		}
		b.Design, b.About = r, "random questions"
	case "landmark-k1", "landmark-k2":
		v := landmark.K1
		if sp.Design == "landmark-k2" {
			v, est.Kind = landmark.K2, kernel.K2
		}
		cfg := landmark.Config{Variant: v, Repeats: sp.Repeats, Seed: seed, Landmarks: sp.Landmarks, NumLandmarks: sp.NumLandmarks}
		ld, err := landmark.New(n, cfg)
		if err != nil {
			return b, err
		}
		b.Design = ld
		if est.Method == KernelPCA {
			est.Landmarks = ld.Landmarks()
			est.Keep = func(t triplet.Triplet) bool { _, ok := ld.Index(triplet.KeyOf(t)); return ok }
		}
		b.About = fmt.Sprintf("landmark %v, %d landmarks, %d comparisons × %d repeats = %d answers to cover", v, len(ld.Landmarks()), ld.Comparisons(), ld.Repeats(), ld.Size())
	case "basis":
		cfg := basis.Config{Seed: seed, Repeats: sp.Repeats, Extra: sp.Extra, Coordinates: sp.Coordinates}
		if err := cfg.Validate(); err != nil {
			return b, err
		}
		b.Design = basis.New(n, cfg)
		b.About = fmt.Sprintf("adaptive basis discovery, repeats %d, extra %v, coordinates %s", sp.Repeats, sp.Extra, sp.Coordinates)
		if sp.Method == "" {
			est.Method = ""
		}
	case "active":
		ad, w, err := ActiveDesign(sp, seed, fitSeed)
		if err != nil {
			return b, err
		}
		b.Design, b.Worker = ad, w
		c := ad.Config()
		b.About = fmt.Sprintf("active, %s scores under the %s model, warm-up %d answers, pool %d (best of %d pairs per head), refit every %d answers",
			c.Score.Rule, sp.Model, ad.Warmup(), c.Pool, sp.Candidates, w.Every)
	default:
		return b, fmt.Errorf("unknown design %q", sp.Design)
	}
	b.Est = est
	return b, nil
}

// ActiveDesign builds the active design sp describes and the worker that
// refits its embedding (t-STE, or CKL for the CKL model, in sp.Dim
// dimensions, warm-started from the previous fit).
func ActiveDesign(sp DesignSpec, seed, fitSeed uint64) (*active.Design, *Worker, error) {
	m, err := active.ParseModel(sp.Model)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	rule, err := active.ParseRule(sp.Score)
	if err != nil {
		return nil, nil, fmt.Errorf("score: %w", err)
	}
	switch {
	case sp.Warmup < 1 || sp.Warmup > active.MaxWarmupPerItem:
		return nil, nil, fmt.Errorf("warm-up %d: want 1..%d answers per item", sp.Warmup, active.MaxWarmupPerItem)
	case sp.Candidates < 1 || sp.Candidates > active.MaxCandidates:
		return nil, nil, fmt.Errorf("candidates %d: want 1..%d", sp.Candidates, active.MaxCandidates)
	case sp.Pool < 0 || sp.Pool > active.MaxPool:
		return nil, nil, fmt.Errorf("pool %d: want 1..%d", sp.Pool, active.MaxPool)
	case sp.RefitEvery < 0:
		return nil, nil, fmt.Errorf("refit every %d answers: want at least 1", sp.RefitEvery)
	case sp.Repeats > active.MaxRepeats:
		return nil, nil, fmt.Errorf("repeats %d: want 1..%d", sp.Repeats, active.MaxRepeats)
	}
	d, err := active.New(sp.N, active.Config{Seed: seed, WarmupPerItem: sp.Warmup, Pool: sp.Pool, Repeats: sp.Repeats,
		Score: active.ScoreConfig{Model: m, Rule: rule, Candidates: sp.Candidates}})
	if err != nil {
		return nil, nil, err
	}
	every := sp.RefitEvery
	if every == 0 {
		every = d.Config().Pool
	}
	method := embed.TSTE
	if m == active.CKL {
		method = embed.CKL
	}
	n, dim := sp.N, sp.Dim
	w := &Worker{Every: every, Fit: func(ctx context.Context, ts []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error) {
		res, err := embed.Fit(ctx, n, ts, embed.Options{Method: method, Dim: dim, Seed: fitSeed, Init: prev})
		if err != nil {
			return nil, err
		}
		return res.X, nil
	}}
	return d, w, nil
}
