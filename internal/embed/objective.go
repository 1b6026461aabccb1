package embed

import (
	"math"
	"sync"
	"sync/atomic"
)

// chunkFunc adds the loss gradient of the triplets tr (flat anchor, closer,
// farther) at the points x (n × d, row-major) into g and returns the summed
// loss of those triplets.
type chunkFunc func(x []float64, d int, tr []int32, g []float64) float64

// minChunk is the smallest number of triplets per chunk; below 2·minChunk
// triplets the loss is evaluated on the calling goroutine alone.
const (
	minChunk  = 8192
	maxChunks = 64
)

// evaluator computes (1/m)·(Σ_t ℓ_t + λ‖X‖²_F), the summed triplet loss
// plus a squared-norm regulariser scaled by the number m of triplets, and
// its gradient, over fixed chunks of the triplets. The chunking depends
// only on the number of triplets, and the chunk partials are added in chunk
// order, so the result is identical whatever the number of workers.
type evaluator struct {
	n, d    int
	tr      []int32
	stride  int // entries of tr per record: 3 for a triplet
	f       chunkFunc
	lambda  float64 // weight of ‖X‖²_F relative to the summed loss
	workers int

	bounds []int       // chunk c covers triplets bounds[c]..bounds[c+1]
	bufs   [][]float64 // gradient partials of chunks 1.. (chunk 0 writes g)
	losses []float64
	evals  int // number of eval calls
	// requests counts the optimiser's requests for the loss, repeats at a
	// cached point included (minimizeLBFGS bounds them).
	requests int
}

func newEvaluator(n, d int, tr []int32, f chunkFunc, lambda float64, workers int) *evaluator {
	return newStridedEvaluator(n, d, tr, 3, f, lambda, workers)
}

// newStridedEvaluator is newEvaluator over records of stride entries each
// (a rank trial's query and its n options: 1 + n); m, the divisor of the
// objective, is then the number of records, and f is handed whole records.
func newStridedEvaluator(n, d int, tr []int32, stride int, f chunkFunc, lambda float64, workers int) *evaluator {
	m := len(tr) / stride
	size := max(minChunk, (m+maxChunks-1)/maxChunks)
	chunks := max(1, (m+size-1)/size)
	e := &evaluator{n: n, d: d, tr: tr, stride: stride, f: f, lambda: lambda, workers: workers}
	e.bounds = make([]int, chunks+1)
	for c := range chunks {
		e.bounds[c+1] = min(m, (c+1)*size)
	}
	e.losses = make([]float64, chunks)
	e.bufs = make([][]float64, chunks)
	for c := 1; c < chunks; c++ {
		e.bufs[c] = make([]float64, n*d)
	}
	return e
}

// eval returns the objective at x and stores its gradient in g.
func (e *evaluator) eval(x, g []float64) float64 {
	e.evals++
	clear(g)
	chunks := len(e.losses)
	run := func(c int) {
		buf := g
		if c > 0 {
			buf = e.bufs[c]
			clear(buf)
		}
		e.losses[c] = e.f(x, e.d, e.tr[e.stride*e.bounds[c]:e.stride*e.bounds[c+1]], buf)
	}
	if chunks == 1 || e.workers == 1 {
		for c := range chunks {
			run(c)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(e.workers, chunks) {
			wg.Go(func() {
				for {
					c := int(next.Add(1)) - 1
					if c >= chunks {
						return
					}
					run(c)
				}
			})
		}
		wg.Wait()
	}
	loss := e.losses[0]
	for c := 1; c < chunks; c++ {
		loss += e.losses[c]
		for i, v := range e.bufs[c] {
			g[i] += v
		}
	}
	if e.lambda > 0 {
		var s float64
		for i, v := range x {
			s += v * v
			g[i] += 2 * e.lambda * v
		}
		loss += e.lambda * s
	}
	m := float64(e.bounds[chunks])
	for i := range g {
		g[i] /= m
	}
	return loss / m
}

// sqDists returns ‖x_i − x_j‖² and ‖x_i − x_k‖².
func sqDists(xi, xj, xk []float64) (dij, dik float64) {
	if len(xi) == 2 && len(xj) == 2 && len(xk) == 2 { // the common case, unrolled
		u0, u1 := xi[0]-xj[0], xi[1]-xj[1]
		v0, v1 := xi[0]-xk[0], xi[1]-xk[1]
		return u0*u0 + u1*u1, v0*v0 + v1*v1
	}
	for c := range xi {
		u := xi[c] - xj[c]
		v := xi[c] - xk[c]
		dij += u * u
		dik += v * v
	}
	return dij, dik
}

// scatter adds the gradient of a triplet loss with ∂ℓ/∂d_ij = cj and
// ∂ℓ/∂d_ik = ck (d squared distances): ∂d_ij/∂x_i = 2(x_i − x_j).
func scatter(xi, xj, xk, gi, gj, gk []float64, cj, ck float64) {
	cj *= 2
	ck *= 2
	if len(xi) == 2 && len(xj) == 2 && len(xk) == 2 && len(gi) == 2 && len(gj) == 2 && len(gk) == 2 {
		u0, u1 := cj*(xi[0]-xj[0]), cj*(xi[1]-xj[1])
		v0, v1 := ck*(xi[0]-xk[0]), ck*(xi[1]-xk[1])
		gi[0] += u0 + v0
		gi[1] += u1 + v1
		gj[0] -= u0
		gj[1] -= u1
		gk[0] -= v0
		gk[1] -= v1
		return
	}
	for c := range xi {
		u := cj * (xi[c] - xj[c])
		v := ck * (xi[c] - xk[c])
		gi[c] += u + v
		gj[c] -= u
		gk[c] -= v
	}
}

// logSum accumulates Σ log v_k for positive v_k as a product kept
// normalised by its binary exponent, so a chunk of triplets costs one log
// instead of one per triplet. The relative rounding error per factor is
// about 1e-16, so the sum's absolute error stays far below the loss scale.
type logSum struct {
	m float64
	e int // the sum is log(m) + e·logBig
}

const (
	big    = 1e100
	logBig = 100 * math.Ln10
)

func newLogSum() logSum { return logSum{m: 1} }

// mul adds log v for v > 0. Factors outside [1e-150, 1e150] are logged
// directly; m stays within [1e-100, 1e100] otherwise, so m·v cannot
// overflow.
func (a *logSum) mul(v float64) {
	if v > 1e150 || v < 1e-150 {
		lv := math.Log(v)
		k := int(lv / logBig)
		a.m *= math.Exp(lv - float64(k)*logBig)
		a.e += k
		a.norm()
		return
	}
	a.m *= v
	a.norm()
}

func (a *logSum) norm() {
	for a.m > big {
		a.m /= big
		a.e++
	}
	for a.m < 1/big {
		a.m *= big
		a.e--
	}
}

func (a *logSum) value() float64 { return math.Log(a.m) + float64(a.e)*logBig }

// steChunk is STE (van der Maaten and Weinberger 2012, sec. 4):
// −log p_ijl with p_ijl = e^{−d_ij} / (e^{−d_ij} + e^{−d_il}), i.e.
// softplus(d_ij − d_il), on squared distances.
func steChunk(x []float64, d int, tr []int32, g []float64) float64 {
	// softplus(u) = max(u, 0) + log(1 + e^{−|u|}); the logs go to a logSum.
	var lin float64
	acc := newLogSum()
	for t := 0; t+2 < len(tr); t += 3 {
		i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
		xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
		dij, dik := sqDists(xi, xj, xk)
		u := dij - dik
		var s float64
		if u > 0 {
			z := math.Exp(-u)
			lin += u
			acc.mul(1 + z)
			s = 1 / (1 + z)
		} else {
			z := math.Exp(u)
			acc.mul(1 + z)
			s = z / (1 + z)
		}
		scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], s, -s)
	}
	return lin + acc.value()
}

// tsteChunk returns t-STE's chunk function (sec. 4): with the Student-t
// kernel q(d) = (1 + d/α)^{−(α+1)/2} on squared distances d,
// −log p_ijl = log(1 + r), r = q(d_il)/q(d_ij) = ((α+d_ij)/(α+d_il))^{(α+1)/2}.
// The ratio is bounded for finite points, so the loss never takes log 0.
func tsteChunk(alpha float64) chunkFunc {
	e := (alpha + 1) / 2
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		var loss float64
		acc := newLogSum()
		for t := 0; t+2 < len(tr); t += 3 {
			i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
			xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
			dij, dik := sqDists(xi, xj, xk)
			qj, qk := alpha+dij, alpha+dik
			if e == 1 {
				// r = qj/qk, 1 + r = (qj+qk)/qk, s = r/(1+r) = qj/(qj+qk):
				// ∂ℓ/∂d_ij = s/qj = 1/(qj+qk), ∂ℓ/∂d_ik = −s/qk = −r/(qj+qk).
				inv := 1 / (qj + qk)
				r := qj / qk
				acc.mul(1 + r)
				scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], inv, -r*inv)
				continue
			}
			invj, invk := 1/qj, 1/qk
			ratio := qj * invk
			var r float64
			if e == 1.5 {
				r = ratio * math.Sqrt(ratio)
			} else {
				r = math.Pow(ratio, e)
			}
			var s float64
			if r > 1e300 {
				loss += e * math.Log(ratio)
				s = 1
			} else {
				acc.mul(1 + r)
				s = r / (1 + r)
			}
			scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], s*e*invj, -s*e*invk)
		}
		return loss + acc.value()
	}
}

// gnmdsChunk returns GNMDS's hinge on squared distances,
// max(0, margin + d_ij − d_il) (van der Maaten and Weinberger 2012, sec. 3,
// constraint (1) with slack ξ_ijl); the trace regulariser is the
// evaluator's λ term, trace(XXᵀ) = Σ‖x_i‖².
func gnmdsChunk(margin float64) chunkFunc {
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		var loss float64
		for t := 0; t+2 < len(tr); t += 3 {
			i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
			xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
			dij, dik := sqDists(xi, xj, xk)
			h := margin + dij - dik
			if h > 0 {
				loss += h
				scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], 1, -1)
			}
		}
		return loss
	}
}

// cklChunk returns CKL's log-loss (sec. 3; Tamuz et al. 2011):
// −log((d_il + μ) / (d_ij + d_il + 2μ)), the probability that the triplet
// is answered as observed, on squared distances.
func cklChunk(mu float64) chunkFunc {
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		acc := newLogSum()
		for t := 0; t+2 < len(tr); t += 3 {
			i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
			xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
			dij, dik := sqDists(xi, xj, xk)
			num := dik + mu
			den := dij + dik + 2*mu
			acc.mul(den / num)
			inv := 1 / den
			scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], inv, inv-1/num)
		}
		return acc.value()
	}
}

// soeChunk returns SOE's squared hinge on distances (Terada and von
// Luxburg 2014, eq. 4): max(0, ‖x_i − x_j‖ + δ − ‖x_i − x_l‖)². At a zero
// distance the (sub)gradient of that distance is taken as 0.
func soeChunk(margin float64) chunkFunc {
	return func(x []float64, d int, tr []int32, g []float64) float64 {
		var loss float64
		for t := 0; t+2 < len(tr); t += 3 {
			i, j, k := int(tr[t])*d, int(tr[t+1])*d, int(tr[t+2])*d
			xi, xj, xk := x[i:i+d], x[j:j+d], x[k:k+d]
			dij, dik := sqDists(xi, xj, xk)
			rij, rik := math.Sqrt(dij), math.Sqrt(dik)
			h := rij + margin - rik
			if h <= 0 {
				continue
			}
			loss += h * h
			// ∂/∂d_ij of ‖·‖ = 1/(2‖·‖); scatter multiplies by 2(x_i − x_j).
			var cj, ck float64
			if rij > 0 {
				cj = h / rij
			}
			if rik > 0 {
				ck = -h / rik
			}
			scatter(xi, xj, xk, g[i:i+d], g[j:j+d], g[k:k+d], cj, ck)
		}
		return loss
	}
}
