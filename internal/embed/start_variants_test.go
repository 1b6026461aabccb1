package embed

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

// The data-driven starts tried besides StartMDS (docs/embeddings.md,
// "Data-driven starts"); none helped, so they live here, as diagnostics.

// k2PCAStart is the kernel PCA of the triplets' own k2 kernel (Kleindessner
// & von Luxburg 2017, eq. 5) with the diagonal-dominance fix.
func k2PCAStart(n int, ts []triplet.Triplet, dim int, scale float64, seed uint64) []float64 {
	f, err := kernel.NewFeatures(kernel.K2, n, ts, nil)
	if err != nil {
		panic(err)
	}
	y, err := kernel.KernelPCA(kernel.Matrix(f, true), dim)
	if err != nil {
		panic(err)
	}
	return rescaled(y, scale, seed)
}

// radialStart puts item i at the χ_dim quantile (times scale) of the rank of
// its count score (#farther − #closer)/(#farther + #closer + 1), in a seeded
// random direction: items often called farther start farther out.
func radialStart(n int, ts []triplet.Triplet, dim int, scale float64, seed uint64) []float64 {
	far := make([]float64, n)
	cl := make([]float64, n)
	for _, t := range ts {
		far[t.Farther]++
		cl[t.Closer]++
	}
	score := make([]float64, n)
	order := make([]int, n)
	for i := range n {
		score[i] = (far[i] - cl[i]) / (far[i] + cl[i] + 1)
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case score[a] < score[b]:
			return -1
		case score[a] > score[b]:
			return 1
		}
		return 0
	})
	chi := distuv.ChiSquared{K: float64(dim)}
	x := randomStart(n, dim, 1, seed)
	for r := 0; r < n; {
		e := r // items with equal scores share the quantile of their mean rank
		for e+1 < n && score[order[e+1]] == score[order[r]] {
			e++
		}
		rad := scale * math.Sqrt(chi.Quantile((float64(r+e)/2+0.5)/float64(n)))
		for k := r; k <= e; k++ {
			row := x[order[k]*dim : (order[k]+1)*dim]
			nn := math.Sqrt(dot(row, row))
			for c := range row {
				row[c] *= rad / nn
			}
		}
		r = e + 1
	}
	return x
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// marginStart is the top-dim eigenpairs of M = Σ_t K_t (the matrix whose
// inner product with G is the summed margin Σ_t (d_ac − d_ab), eq. 4 of Ma
// et al.; its diagonal holds the count scores), i.e. the rank-dim G of unit
// norm with the largest summed margin.
func marginStart(n int, ts []triplet.Triplet, dim int, scale float64, seed uint64) []float64 {
	m := mat.NewSymDense(n, nil)
	raw := m.RawSymmetric().Data
	add := func(i, j int, v float64) {
		raw[i*n+j] += v
		if i != j {
			raw[j*n+i] += v
		}
	}
	for _, t := range ts {
		add(t.Farther, t.Farther, 1)
		add(t.Closer, t.Closer, -1)
		add(t.Anchor, t.Closer, 1)
		add(t.Anchor, t.Farther, -1)
	}
	var eig mat.EigenSym
	if !eig.Factorize(m, true) {
		panic("marginStart: no convergence")
	}
	vals := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	y := mat.NewDense(n, dim, nil)
	for c := range dim {
		if l := vals[n-1-c]; l > 0 {
			for i := range n {
				y.Set(i, c, math.Sqrt(l)*vec.At(i, n-1-c))
			}
		}
	}
	return rescaled(y, scale, seed)
}

// TestStartVariants prints, on the Table 1 setting, each start's own
// held-out error and the fits of GNMDS and STE from it with the default λ
// and with λ = 0 (medians over -seeds data sets):
//
//	go test ./internal/embed -run TestStartVariants -reproduce -v
func TestStartVariants(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow diagnostic; run with -reproduce")
	}
	type startFn func(n int, ts []triplet.Triplet, dim int, scale float64, seed uint64) []float64
	starts := []struct {
		name string
		f    startFn
	}{
		{"random", func(n int, _ []triplet.Triplet, dim int, scale float64, seed uint64) []float64 {
			return randomStart(n, dim, scale, seed)
		}},
		{"k2 kernel PCA", k2PCAStart},
		{"radial (count score)", radialStart},
		{"margin (Σ K_t)", marginStart},
		{"mds", mdsStart},
		// Leaks the truth (a ceiling for radial starts, not a start): the
		// true norms in seeded random directions (trueNormStart).
		{"true norms, random directions (leak)", nil},
	}
	for _, m := range []int{200, 1000, 10000} {
		data := make([][2][]triplet.Triplet, *repSeeds)
		for s := range data {
			data[s][0], data[s][1] = table1Data(uint64(s+1), m)
		}
		for _, st := range starts {
			cols := make([][]float64, 5) // alone, GNMDS, GNMDS λ=0, STE, STE λ=0
			for s := range data {
				var x0 []float64
				if st.f != nil {
					x0 = st.f(100, data[s][0], 10, 1e-4, triplet.NewRand(uint64(1000+s)).Uint64())
				} else {
					x0 = trueNormStart(table1Points(uint64(s+1)), 1e-4*math.Sqrt(20), uint64(1000+s))
				}
				cols[0] = append(cols[0], TripletError(mat.NewDense(100, 10, x0), data[s][1]))
				for k, o := range []Options{{Method: GNMDS}, {Params: GNMDSParams{Lambda: -1}}, {Method: STE}, {Params: STEParams{Lambda: -1}}} {
					o.Dim, o.Seed, o.Init = 10, uint64(1000+s), mat.NewDense(100, 10, slices.Clone(x0))
					res, err := Fit(context.Background(), 100, data[s][0], o)
					if err != nil {
						t.Fatal(err)
					}
					cols[k+1] = append(cols[k+1], TripletError(res.X, data[s][1]))
				}
			}
			med := make([]float64, len(cols))
			for k, c := range cols {
				slices.Sort(c)
				med[k] = median(c)
			}
			t.Logf("| %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f |", m, st.name, med[0], med[1], med[2], med[3], med[4])
		}
	}
}

// trueNormStart gives row i of x's norm times scale in a seeded random
// direction (a diagnostic that uses the truth).
func trueNormStart(x *mat.Dense, scale float64, seed uint64) []float64 {
	n, dim := x.Dims()
	y := randomStart(n, dim, 1, seed)
	for i := range n {
		row := y[i*dim : (i+1)*dim]
		f := scale * mat.Norm(x.RowView(i), 2) / math.Sqrt(dot(row, row))
		for c := range row {
			row[c] *= f
		}
	}
	return y
}
