package uncertainty

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestRotationRecoversKnownRotation: b is a rotated by a known angle (and,
// in the second case, reflected); Rotation finds the inverse map exactly.
func TestRotationRecoversKnownRotation(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(1)
	a := triplet.Gaussian(rng, 30, 2, 1)
	th := 0.7
	rot := mat.NewDense(2, 2, []float64{math.Cos(th), -math.Sin(th), math.Sin(th), math.Cos(th)})
	refl := mat.NewDense(2, 2, []float64{1, 0, 0, -1})
	var rotRefl mat.Dense
	rotRefl.Mul(rot, refl)
	for name, r := range map[string]mat.Matrix{"rotation": rot, "rotation and reflection": &rotRefl} {
		var b mat.Dense
		b.Mul(a, r)
		q := Rotation(a, &b)
		var back mat.Dense
		back.Mul(r, q)
		if !mat.EqualApprox(&back, mat.NewDense(2, 2, []float64{1, 0, 0, 1}), 1e-10) {
			t.Errorf("%s: R·Q = %v, want the identity", name, mat.Formatted(&back))
		}
		var got mat.Dense
		Align(&got, a, &b)
		if !mat.EqualApprox(&got, a, 1e-10) {
			t.Errorf("%s: aligned b differs from a", name)
		}
	}
	// In 3-D, with noise: the recovered map is close to the true inverse.
	a3 := triplet.Gaussian(rng, 50, 3, 1)
	var qr mat.QR
	qr.Factorize(triplet.Gaussian(rng, 3, 3, 1))
	var r3 mat.Dense
	qr.QTo(&r3)
	var b3 mat.Dense
	b3.Mul(a3, &r3)
	noise := triplet.Gaussian(rng, 50, 3, 0.01)
	b3.Add(&b3, noise)
	var back mat.Dense
	back.Mul(&r3, Rotation(a3, &b3))
	if !mat.EqualApprox(&back, mat.NewDense(3, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}), 0.01) {
		t.Errorf("3-D: R·Q = %v, want about the identity", mat.Formatted(&back))
	}
}

func simulated(n, m int, seed uint64) (train, test []triplet.Triplet) {
	rng := triplet.NewRand(seed)
	x := triplet.Gaussian(rng, n, 2, 1)
	o := triplet.NewOracle(x, 0.1, seed)
	return triplet.RandomTriplets(rng, o, m), triplet.RandomTriplets(rng, o, 1000)
}

func meanOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestSpreadShrinksWithMoreData: four times the answers give a clearly
// smaller spread, more stable neighbours and a narrower error interval; the
// covariance's trace matches the spread; the result does not depend on the
// number of workers.
func TestSpreadShrinksWithMoreData(t *testing.T) {
	t.Parallel()
	var rms, stab, width [2]float64
	for k, m := range []int{600, 2400} {
		train, test := simulated(30, m, 5)
		opt := Options{Fit: embed.Options{Method: embed.STE, Seed: 2}, Reps: 30, Test: test}
		res, err := Bootstrap(context.Background(), 30, train, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		rms[k], stab[k], width[k] = meanOf(res.RMS), meanOf(res.Stability), res.ErrorHigh-res.ErrorLow
		t.Logf("m = %d: mean RMS spread %.4f, neighbour stability %.3f, held-out error %.4f [%.4f, %.4f]",
			m, rms[k], stab[k], res.HeldoutError, res.ErrorLow, res.ErrorHigh)
		if !(res.ErrorLow < res.HeldoutError && res.HeldoutError < res.ErrorHigh) {
			t.Errorf("m = %d: interval [%g, %g], error %g", m, res.ErrorLow, res.ErrorHigh, res.HeldoutError)
		}
		for i := range 30 {
			tr := res.Cov[i].At(0, 0) + res.Cov[i].At(1, 1)
			// RMS² = trace(cov)·(B−1)/B + ‖mean − ref‖² ≥ trace·(B−1)/B.
			if res.RMS[i]*res.RMS[i] < tr*29/30-1e-12 {
				t.Errorf("item %d: RMS² %g below the covariance's trace %g", i, res.RMS[i]*res.RMS[i], tr)
			}
		}
		if k == 0 {
			opt.Workers = 1
			again, err := Bootstrap(context.Background(), 30, train, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.RMS {
				if res.RMS[i] != again.RMS[i] || res.Stability[i] != again.Stability[i] {
					t.Fatalf("item %d: RMS %g / %g, stability %g / %g with 1 worker", i, res.RMS[i], again.RMS[i], res.Stability[i], again.Stability[i])
				}
			}
		}
	}
	if rms[1] > 0.7*rms[0] {
		t.Errorf("spread %.4f with 4× the answers, want below 0.7 × %.4f", rms[1], rms[0])
	}
	if width[1] >= width[0] {
		t.Errorf("error interval %.4f wide with 4× the answers, not below %.4f", width[1], width[0])
	}
	if stab[1] <= stab[0] {
		t.Errorf("neighbour stability %.3f with 4× the answers, not above %.3f", stab[1], stab[0])
	}
}

// TestBootstrapGroups: resampling participants draws whole participants;
// with one participant giving every answer, every replicate is the full
// data and the spread is that of refits alone (tiny from a warm start).
func TestBootstrapGroups(t *testing.T) {
	t.Parallel()
	train, _ := simulated(20, 800, 3)
	groups := make([]int, len(train))
	res, err := Bootstrap(context.Background(), 20, train, nil, Options{Fit: embed.Options{Method: embed.STE}, Reps: 5, Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	if s := meanOf(res.RMS); s > 0.02 {
		t.Errorf("one participant: spread %g, want about 0", s)
	}
	got := groupAnswers([]int{7, 3, 7, 9, 3}, 5)
	if len(got) != 3 || len(got[0]) != 2 || got[0][1] != 2 || got[1][1] != 4 || got[2][0] != 3 {
		t.Errorf("groupAnswers = %v", got)
	}
	if _, err := Bootstrap(context.Background(), 20, train, nil, Options{Groups: groups[:3]}); err == nil {
		t.Error("groups of the wrong length: no error")
	}
}

func TestBootstrapCancelled(t *testing.T) {
	t.Parallel()
	train, _ := simulated(20, 400, 3)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := Bootstrap(ctx, 20, train, nil, Options{Fit: embed.Options{Method: embed.STE}, Reps: 50, Workers: 1,
		Progress: func(done, total int) {
			if n++; n == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCentredInterval(t *testing.T) {
	t.Parallel()
	lo, hi := CentredInterval(0.1, []float64{0.2, 0.21, 0.22, 0.23, 0.24}, 0.5)
	if math.Abs(lo-0.09) > 1e-12 || math.Abs(hi-0.11) > 1e-12 {
		t.Errorf("CentredInterval = %g, %g; want 0.09, 0.11", lo, hi)
	}
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	lo, hi := embed.Percentiles([]float64{5, 1, math.NaN(), 3, 2, 4}, 0.5)
	if lo != 2 || hi != 4 {
		t.Errorf("Percentiles = %g, %g; want 2, 4", lo, hi)
	}
}

// TestNearestMatchesTriplet: the insertion k-NN gives triplet.Nearest's
// answer, ties included.
func TestNearestMatchesTriplet(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(9)
	x := triplet.Gaussian(rng, 60, 2, 1)
	// Ties: a grid of integer points.
	g := mat.NewDense(25, 2, nil)
	for i := range 25 {
		g.Set(i, 0, float64(i%5))
		g.Set(i, 1, float64(i/5))
	}
	for _, pts := range []*mat.Dense{x, g} {
		n, _ := pts.Dims()
		for _, k := range []int{1, 4, 5, n - 1, n + 3} {
			for i := range n {
				want := triplet.Nearest(nil, pts, i, k)
				got := nearest(nil, pts, i, k)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("n=%d k=%d i=%d: %v, want %v", n, k, i, got, want)
				}
			}
		}
	}
}

// TestColdReplicatesAligned: replicates fitted from their own starts come
// out rotated and reflected at random (an isotropic cloud has no stable
// principal axes); aligned by Procrustes their spread is small, unaligned it
// would be of the order of the radius.
func TestColdReplicatesAligned(t *testing.T) {
	t.Parallel()
	rng := triplet.NewRand(12)
	x := triplet.Ball(rng, 40, 2)
	o := triplet.NewOracle(x, 0.05, 12)
	train := triplet.RandomTriplets(rng, o, 4000)
	res, err := Bootstrap(context.Background(), 40, train, nil, Options{Fit: embed.Options{Method: embed.STE, Seed: 1}, Reps: 12, Cold: true})
	if err != nil {
		t.Fatal(err)
	}
	s := meanOf(res.RMS)
	t.Logf("cold replicates: mean spread %.4f, stability %.3f", s, meanOf(res.Stability))
	if s > 0.2 {
		t.Errorf("mean spread %.3f of cold replicates, want below 0.2 once aligned", s)
	}
}
