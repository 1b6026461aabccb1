package embed

import (
	"context"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestDefaults checks withDefaults against the defaults documented on each
// field of Options (embed.go), per method, and that set fields are kept.
func TestDefaults(t *testing.T) {
	type want struct {
		maxIter                    int
		tol, alpha, lambda, margin float64
		initScale                  float64
	}
	// From the field comments: MaxIter 1000 (DMOE 300), Tol 1e-6 (DMOE
	// 1e-4), Alpha max(Dim−1, 1), Lambda 2 STE / 1 CKL / 0 t-STE / 3 GNMDS /
	// 0.3 DMOE, Margin 1 (SOE 0.1), InitScale 1e-4 (CKL and SOE 1).
	for meth, w := range map[Method]want{
		TSTE:  {1000, 1e-6, 1, 0, 1, 1e-4},
		STE:   {1000, 1e-6, 1, 2, 1, 1e-4},
		GNMDS: {1000, 1e-6, 1, 3, 1, 1e-4},
		CKL:   {1000, 1e-6, 1, 1, 1, 1},
		SOE:   {1000, 1e-6, 1, 0, 0.1, 1},
		DMOE:  {300, 1e-4, 1, 0.3, 1, 1e-4},
	} {
		o := Options{Method: meth}.withDefaults()
		got := want{o.MaxIter, o.Tol, o.Alpha, o.Lambda, o.Margin, o.InitScale}
		if got != w {
			t.Errorf("%s defaults %+v, want %+v", meth, got, w)
		}
		if o.Dim != 2 || o.Mu != 0.1 || o.Inits != 4 || o.Nu != 1 || o.Penalty != 0.1 || o.Rho != 1.05 || o.Start != StartRandom || o.Workers != runtime.GOMAXPROCS(0) {
			t.Errorf("%s: Dim %d Mu %g Inits %d Nu %g Penalty %g Rho %g Start %q Workers %d; want 2, 0.1, 4, 1, 0.1, 1.05, random, GOMAXPROCS",
				meth, o.Dim, o.Mu, o.Inits, o.Nu, o.Penalty, o.Rho, o.Start, o.Workers)
		}
	}
	if o := (Options{}).withDefaults(); o.Method != TSTE {
		t.Errorf("default method %q, want tste", o.Method)
	}
	if o := (Options{Dim: 5}).withDefaults(); o.Alpha != 4 {
		t.Errorf("t-STE α in 5-D %g, want Dim − 1 = 4", o.Alpha)
	}
	set := Options{Method: DMOE, Dim: 3, MaxIter: 7, Tol: 0.5, Alpha: 2.5, Lambda: 0.7, Mu: 0.2, Margin: 3, Inits: 2, Nu: 0.4,
		Penalty: 0.3, Rho: 1.2, InitScale: 0.01, Start: StartMDS, Workers: 1}
	// (DeepEqual: Options holds a func, nil in both.)
	if o := set.withDefaults(); !reflect.DeepEqual(o, set) {
		t.Errorf("set fields changed: %+v, want %+v", o, set)
	}
}

// TestValidate: every bound validate documents rejects the value just past
// it (NaN too, for the "must be positive" ones written as !(x > 0)) and
// accepts the value on it.
func TestValidate(t *testing.T) {
	nan := math.NaN()
	base := Options{Method: DMOE}.withDefaults()
	for _, c := range []struct {
		name string
		set  func(*Options)
		ok   bool
	}{
		{"Dim 0", func(o *Options) { o.Dim = 0 }, false},
		{"Dim 1", func(o *Options) { o.Dim = 1 }, true},
		{"MaxIter 0", func(o *Options) { o.MaxIter = 0 }, false},
		{"MaxIter 1", func(o *Options) { o.MaxIter = 1 }, true},
		{"Tol 0", func(o *Options) { o.Tol = 0 }, false},
		{"Tol NaN", func(o *Options) { o.Tol = nan }, false},
		{"Tol 1e-300", func(o *Options) { o.Tol = 1e-300 }, true},
		{"Alpha 0", func(o *Options) { o.Alpha = 0 }, false},
		{"Alpha NaN", func(o *Options) { o.Alpha = nan }, false},
		{"Lambda −1e-9", func(o *Options) { o.Lambda = -1e-9 }, false},
		{"Lambda 0", func(o *Options) { o.Lambda = 0 }, true},
		{"Mu 0", func(o *Options) { o.Mu = 0 }, false},
		{"Mu NaN", func(o *Options) { o.Mu = nan }, false},
		{"Margin 0", func(o *Options) { o.Margin = 0 }, false},
		{"Margin NaN", func(o *Options) { o.Margin = nan }, false},
		{"Inits 0", func(o *Options) { o.Inits = 0 }, false},
		{"Inits 1", func(o *Options) { o.Inits = 1 }, true},
		{"Nu −1e-9", func(o *Options) { o.Nu = -1e-9 }, false},
		{"Nu 0", func(o *Options) { o.Nu = 0 }, true},
		{"Penalty 0", func(o *Options) { o.Penalty = 0 }, false},
		{"Penalty NaN", func(o *Options) { o.Penalty = nan }, false},
		{"Rho 0.999", func(o *Options) { o.Rho = 0.999 }, false},
		{"Rho NaN", func(o *Options) { o.Rho = nan }, false},
		{"Rho 1", func(o *Options) { o.Rho = 1 }, true},
		{"InitScale 0", func(o *Options) { o.InitScale = 0 }, false},
		{"InitScale NaN", func(o *Options) { o.InitScale = nan }, false},
		{"Start spectral", func(o *Options) { o.Start = "spectral" }, false},
		{"Method mds", func(o *Options) { o.Method = "mds" }, false},
	} {
		o := base
		c.set(&o)
		if err := o.validate(); (err == nil) != c.ok {
			t.Errorf("%s: validate() = %v, want ok = %v", c.name, err, c.ok)
		}
	}
}

// TestFitSmallest: Fit accepts the smallest problem it documents (3 items,
// one triplet, one dimension, an iteration cap of 1, one SOE start) and
// rejects 2 items.
func TestFitSmallest(t *testing.T) {
	ts := []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 2}}
	for _, meth := range Methods {
		res, err := Fit(context.Background(), 3, ts, Options{Method: meth, Dim: 1, MaxIter: 1, Inits: 1, Seed: 1})
		if err != nil {
			t.Errorf("%s: 3 items, 1 triplet: %v", meth, err)
			continue
		}
		if r, c := res.X.Dims(); r != 3 || c != 1 {
			t.Errorf("%s: result %d×%d, want 3×1", meth, r, c)
		}
		// The cap holds. (For the point methods gonum counts the start as
		// its first major iteration, so MaxIter 1 takes no L-BFGS step and
		// reports 0 iterations; at the default cap GNMDS reports 999.)
		if res.Iterations > 1 || meth == DMOE && res.Iterations != 1 {
			t.Errorf("%s: %d iterations, cap 1 (DMOE: exactly 1 ADMM iteration)", meth, res.Iterations)
		}
	}
	if _, err := Fit(context.Background(), 2, []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 1}}, Options{}); err == nil {
		t.Error("2 items: no error")
	}
}
