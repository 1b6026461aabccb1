package embed

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// Native likelihoods of the question formats beyond the triplet (issue
// 27). Both put a choice rule over the similarities of t-STE's Student-t
// kernel (van der Maaten and Weinberger 2012, sec. 4),
//
//	q(d) = (1 + d/α)^{−(α+1)/2},  s(d) = log q(d),  d = ‖x_i − x_j‖²,
//
// so that the only difference from "derive the triplets, then fit t-STE"
// is the likelihood, not the kernel, and they take t-STE's parameters
// (TSTEParams: α default max(Dim−1, 1), λ default 0.001) and its
// regulariser: the objective is (1/m)·(Σ_t ℓ_t + λ‖X‖²_F) over m trials.
//
// Odd-one-out (SPoSE and VICE's choice model; Zheng et al. 2019, eq. 1,
// Hebart et al. 2020): of three items i, j, k shown, k is chosen as the odd
// one with probability
//
//	P(k odd) = exp(s_ij) / (exp(s_ij) + exp(s_ik) + exp(s_jk)),
//
// a softmax over the similarities of the three pairs: the odd one is the
// item left out of the most similar pair. SPoSE's similarity is a dot
// product of non-negative sparse embeddings; closer's embeddings are
// metric, so s is the log of t-STE's kernel (a Gaussian s = −d would make
// the model STE's). ℓ = −log P(odd).
//
// Rank (the sequential Luce, or Plackett–Luce, choice rule of psiz's rank
// model; Roads and Mozer 2019, eq. 1–2; psiz's SoftRankBase computes the
// log-probability of each selection as log s_r − log Σ_{o ≥ r} s_o over the
// options in the order ranked, selected first): the k choices c_1..c_k
// from the n references R are made one at a time, each with probability
// its similarity to the query over the summed similarity of those left,
//
//	P(c_1, …, c_k) = Π_{r=1..k} q(d_{q,c_r}) / Σ_{o ∈ R∖{c_1..c_{r−1}}} q(d_{q,o}).
//
// psiz's similarity is exponential, exp(−β d^τ) + γ, with β, τ, γ
// learned; here it is the t-STE kernel with its fixed α.

// oddChunk returns the odd-one-out chunk function; records are (i, j, odd)
// with i, j the pair judged alike. With r_x = q(d_x)/q(d_ij) for the pairs
// x = (i, odd), (j, odd), ℓ = log(1 + r_io + r_jo) and, writing
// p_x = r_x/(1 + r_io + r_jo) and p_ij = 1/(1 + r_io + r_jo),
// ∂ℓ/∂s_ij = p_ij − 1, ∂ℓ/∂s_x = p_x, ∂s/∂d = −e/(α + d), e = (α+1)/2.
func oddChunk(alpha float64) chunkFunc {
	e := (alpha + 1) / 2
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		var loss float64
		acc := newLogSum()
		for t := 0; t+2 < len(tr); t += 3 {
			i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
			xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
			dij, dik := sqDists(xi, xj, xk)
			_, djk := sqDists(xj, xi, xk)
			aij, aik, ajk := alpha+dij, alpha+dik, alpha+djk
			r1 := powE(aij/aik, e)
			r2 := powE(aij/ajk, e)
			z := 1 + r1 + r2
			var p1, p2 float64
			if z > 1e300 {
				// log z ≈ the log of its largest term.
				loss += e * math.Log(aij/math.Min(aik, ajk))
				if aik < ajk {
					p1 = 1
				} else {
					p2 = 1
				}
			} else {
				acc.mul(z)
				p1, p2 = r1/z, r2/z
			}
			pij := 1 - p1 - p2
			cij := (1 - pij) * e / aij
			cik := -p1 * e / aik
			cjk := -p2 * e / ajk
			// (i; j, k) takes the pairs ij and ik; the pair jk is added
			// as (j; k, ·) with a zero second coefficient.
			scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], cij, cik)
			scatterPair(xj, xk, g[j:j+d], g[k:k+d], cjk)
		}
		return loss + acc.value()
	}
}

// scatterPair adds the gradient of c·d_uv (d squared distance):
// 2c(x_u − x_v) to g_u and its negative to g_v.
func scatterPair(xu, xv, gu, gv []float64, c float64) {
	c *= 2
	for k := range xu {
		v := c * (xu[k] - xv[k])
		gu[k] += v
		gv[k] -= v
	}
}

// powE returns v^e, by multiplications (and a square root) when 2e is a
// small integer — α = 1, 2, …, 19, the defaults up to 20 dimensions —
// and math.Pow otherwise.
func powE(v, e float64) float64 {
	n := int(2 * e)
	if float64(n) != 2*e || n > 40 {
		return math.Pow(v, e)
	}
	r := 1.0
	if n%2 == 1 {
		r = math.Sqrt(v)
	}
	for b, p := n/2, v; b > 0; b >>= 1 {
		if b&1 == 1 {
			r *= p
		}
		p *= p
	}
	return r
}

// rankChunk returns the rank chunk function for trials of n options and k
// choices; a record is the query, then the options in the order ranked
// (the k choices in order, then the others). With w_o = q(d_o)/q(d_min)
// ≤ 1 (d_min the smallest squared distance from the query to an option)
// and S_r = Σ_{o ≥ r} w_o, ℓ = Σ_{r<k} log(S_r / w_r), and
// ∂ℓ/∂s_o = Σ_{r<k, r ≤ o} w_o/S_r − [o < k].
func rankChunk(alpha float64, n, k int) chunkFunc {
	e := (alpha + 1) / 2
	stride := 1 + n
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		var loss float64
		acc := newLogSum()
		a := make([]float64, n) // α + d_o
		w := make([]float64, n)
		c := make([]float64, n)
		suf := make([]float64, n+1)
		for t := 0; t+stride <= len(tr); t += stride {
			q := int(tr[t]) * d
			xq := x[q : q+d]
			amin := math.Inf(1)
			for o := range n {
				j := int(tr[t+1+o]) * d
				xj := x[j : j+d]
				var s float64
				for m := range xq {
					u := xq[m] - xj[m]
					s += u * u
				}
				a[o] = alpha + s
				amin = math.Min(amin, a[o])
			}
			for o := range n {
				w[o] = powE(amin/a[o], e)
			}
			// suf[o] = S_o = Σ_{o' ≥ o} w_o', summed from the end so that a
			// small tail is not the difference of large sums.
			suf[n] = 0
			for o := n - 1; o >= 0; o-- {
				suf[o] = suf[o+1] + w[o]
			}
			// c[o] accumulates ∂ℓ/∂s_o.
			var cum float64 // Σ_{r ≤ min(o, k−1)} 1/S_r
			for o := range n {
				if o < k {
					s := suf[o]
					if w[o] < 1e-280 {
						loss += math.Log(s) + e*math.Log(a[o]/amin)
					} else {
						acc.mul(s / w[o])
					}
					cum += 1 / s
					c[o] = w[o]*cum - 1
				} else {
					c[o] = w[o] * cum
				}
			}
			gq := g[q : q+d]
			for o := range n {
				j := int(tr[t+1+o]) * d
				// ∂ℓ/∂d_o = c_o · ∂s/∂d = −c_o e/(α + d_o).
				scatterPair(xq, x[j:j+d], gq, g[j:j+d], -c[o]*e/a[o])
			}
		}
		return loss + acc.value()
	}
}

// nativeParams returns the t-STE parameters the native likelihoods take
// from opt, after defaults; another method is an error.
func nativeParams(opt Options, what string) (Options, TSTEParams, error) {
	if opt.Method == "" && opt.Params == nil {
		opt.Method = TSTE
	}
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return opt, TSTEParams{}, err
	}
	p, ok := opt.Params.(TSTEParams)
	if !ok {
		return opt, TSTEParams{}, fmt.Errorf("the native %s likelihood takes t-STE's kernel and parameters, not %s's (fit the derived triplets for other methods)", what, opt.Method)
	}
	return opt, p, nil
}

func checkWarmStart(n int, opt Options) error {
	if opt.Init != nil {
		if r, c := opt.Init.Dims(); r != n || c != opt.Dim {
			return fmt.Errorf("warm start is %d×%d, want %d×%d", r, c, n, opt.Dim)
		}
	}
	return nil
}

// FitOddOneOut learns an embedding of n items from odd-one-out trials by
// the softmax choice model above (the "Native likelihoods" comment), with
// L-BFGS from t-STE's starts: the MDS start of the derived triplets and
// random ones, the fit with the fewest wrong derived training triplets
// kept. opt's Method must be t-STE (or unset); its Params give α and λ.
// The points come back centred at the model's own scale: pass them to
// Normalize for the bounded normal form.
func FitOddOneOut(ctx context.Context, n int, ts []trial.OddOneOut, opt Options) (*Result, error) {
	opt, p, err := nativeParams(opt, "odd-one-out")
	if err != nil {
		return nil, fmt.Errorf("embed odd-one-out: %w", err)
	}
	if n < 3 || len(ts) == 0 {
		return nil, fmt.Errorf("embed odd-one-out: need 3 items and a trial, have %d and %d", n, len(ts))
	}
	if err := checkWarmStart(n, opt); err != nil {
		return nil, fmt.Errorf("embed odd-one-out: %w", err)
	}
	tr := make([]int32, 0, 3*len(ts))
	for k, t := range ts {
		if err := t.Validate(n); err != nil {
			return nil, fmt.Errorf("embed odd-one-out: trial %d: %w", k, err)
		}
		i, j := t.Pair()
		tr = append(tr, int32(i), int32(j), int32(t.Odd))
	}
	ev := newStridedEvaluator(n, opt.Dim, tr, 3, oddChunk(p.Alpha), p.Lambda, opt.Workers)
	res, err := fitEvaluator(ctx, n, trial.OddTriplets(ts), ev, opt, p.starts(opt.Dim))
	if err != nil {
		return nil, fmt.Errorf("embed odd-one-out: %w", err)
	}
	centre(res.X)
	return res, nil
}

// FitRank learns an embedding of n items from rank trials (all of one
// size) by the Plackett–Luce choice rule above, as FitOddOneOut does.
func FitRank(ctx context.Context, n int, ts []trial.Rank, opt Options) (*Result, error) {
	opt, p, err := nativeParams(opt, "rank")
	if err != nil {
		return nil, fmt.Errorf("embed rank: %w", err)
	}
	if n < 3 || len(ts) == 0 {
		return nil, fmt.Errorf("embed rank: need 3 items and a trial, have %d and %d", n, len(ts))
	}
	if err := checkWarmStart(n, opt); err != nil {
		return nil, fmt.Errorf("embed rank: %w", err)
	}
	spec := ts[0].Spec()
	stride := 1 + spec.N
	tr := make([]int32, 0, stride*len(ts))
	ord := make([]int, spec.N)
	for k, t := range ts {
		if err := t.Validate(n, spec); err != nil {
			return nil, fmt.Errorf("embed rank: trial %d: %w", k, err)
		}
		tr = append(tr, int32(t.Query))
		for _, o := range t.Ordered(ord) {
			tr = append(tr, int32(o))
		}
	}
	ev := newStridedEvaluator(n, opt.Dim, tr, stride, rankChunk(p.Alpha, spec.N, spec.K), p.Lambda, opt.Workers)
	res, err := fitEvaluator(ctx, n, trial.RankTriplets(ts), ev, opt, p.starts(opt.Dim))
	if err != nil {
		return nil, fmt.Errorf("embed rank: %w", err)
	}
	centre(res.X)
	return res, nil
}

// OddOneOutAccuracy returns the fraction of the trials whose odd one the
// points x predict: the item left out of the closest pair (a tie between
// pairs counts as a miss). It is odd-one-out's held-out score (THINGS and
// SPoSE report it; chance is 1/3). NaN for no trials.
func OddOneOutAccuracy(x *mat.Dense, ts []trial.OddOneOut) float64 {
	if len(ts) == 0 {
		return math.NaN()
	}
	hit := 0
	for _, t := range ts {
		a, b, c := t.Items[0], t.Items[1], t.Items[2]
		dab, dac, dbc := triplet.SqDist(x, a, b), triplet.SqDist(x, a, c), triplet.SqDist(x, b, c)
		var odd int
		switch {
		case dab < dac && dab < dbc:
			odd = c
		case dac < dab && dac < dbc:
			odd = b
		case dbc < dab && dbc < dac:
			odd = a
		default:
			continue
		}
		if odd == t.Odd {
			hit++
		}
	}
	return float64(hit) / float64(len(ts))
}

// RankTop1Accuracy returns the fraction of rank trials whose first choice
// is the reference the points x put nearest the query (a tie counts as a
// miss): the held-out score of psiz's rank trials. NaN for no trials.
func RankTop1Accuracy(x *mat.Dense, ts []trial.Rank) float64 {
	if len(ts) == 0 {
		return math.NaN()
	}
	hit := 0
	for _, t := range ts {
		best, tie := -1, false
		bestD := math.Inf(1)
		for _, o := range t.Options {
			d := triplet.SqDist(x, t.Query, o)
			switch {
			case d < bestD:
				best, bestD, tie = o, d, false
			case d == bestD:
				tie = true
			}
		}
		if !tie && len(t.Choices) > 0 && best == t.Choices[0] {
			hit++
		}
	}
	return float64(hit) / float64(len(ts))
}

// OddOneOutProbs stores in p the native model's probabilities that each of
// items is chosen as the odd one out at the points x (the fit's own
// coordinates, not the normal form, whose scale differs) with t-STE's α:
// P(k odd) ∝ q(d_ij) over the pair {i, j} without k (the "Native
// likelihoods" comment).
func OddOneOutProbs(p *[3]float64, x *mat.Dense, alpha float64, items [3]int) {
	e := (alpha + 1) / 2
	a, b, c := items[0], items[1], items[2]
	// The pairs without a, b and c; each weight relative to the closest
	// pair's, so that none overflows.
	d := [3]float64{alpha + triplet.SqDist(x, b, c), alpha + triplet.SqDist(x, a, c), alpha + triplet.SqDist(x, a, b)}
	m := min(d[0], d[1], d[2])
	var sum float64
	for k := range d {
		p[k] = powE(m/d[k], e)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
}

// NativeAlpha returns the α of t-STE's kernel that FitOddOneOut and
// FitRank use with opt (its TSTEParams' Alpha, else max(Dim−1, 1)), for
// OddOneOutProbs; NaN when opt's method is not t-STE.
func NativeAlpha(opt Options) float64 {
	_, p, err := nativeParams(opt, "")
	if err != nil {
		return math.NaN()
	}
	return p.Alpha
}

// RankFirstProbs stores in dst (len(options)) the native rank model's
// probabilities that each option is chosen first for query at the points
// x (the fit's own coordinates) with t-STE's α: q(d_o)/Σ q — the first
// factor of the Plackett–Luce product.
func RankFirstProbs(dst []float64, x *mat.Dense, alpha float64, query int, options []int) {
	if len(dst) != len(options) {
		panic("embed: RankFirstProbs: destination length mismatch")
	}
	e := (alpha + 1) / 2
	amin := math.Inf(1)
	for k, o := range options {
		dst[k] = alpha + triplet.SqDist(x, query, o)
		amin = math.Min(amin, dst[k])
	}
	var sum float64
	for k := range dst {
		dst[k] = powE(amin/dst[k], e)
		sum += dst[k]
	}
	for k := range dst {
		dst[k] /= sum
	}
}
