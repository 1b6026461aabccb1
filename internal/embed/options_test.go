package embed

import (
	"context"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// TestDefaults checks withDefaults against the defaults documented on the
// fields of Options (embed.go) and of each method's Params (params.go), and
// that set fields are kept.
func TestDefaults(t *testing.T) {
	t.Parallel()
	type loop struct {
		maxIter        int
		tol, initScale float64
	}
	// From the comments: MaxIter 1000 (DMOE 300), Tol 1e-6 (DMOE 1e-4),
	// InitScale 1e-4 (CKL and SOE 1); t-STE α max(Dim−1, 1), λ 0.001; STE λ 2;
	// GNMDS λ 3, margin 1; CKL λ 1, μ 0.1; SOE margin 0.1, 4 starts; DMOE
	// λ 0.3, margin 1, ν 1, penalty 0.1, ρ 1.05.
	for _, c := range []struct {
		method Method
		loop   loop
		params Params
	}{
		{TSTE, loop{1000, 1e-6, 1e-4}, TSTEParams{Alpha: 1, Lambda: 0.001}},
		{STE, loop{1000, 1e-6, 1e-4}, STEParams{Lambda: 2}},
		{GNMDS, loop{1000, 1e-6, 1e-4}, GNMDSParams{Lambda: 3, Margin: 1}},
		{CKL, loop{1000, 1e-6, 1}, CKLParams{Lambda: 1, Mu: 0.1}},
		{SOE, loop{1000, 1e-6, 1}, SOEParams{Margin: 0.1, Inits: 4}},
		{DMOE, loop{300, 1e-4, 1e-4}, DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: 0.1, Rho: 1.05}},
	} {
		t.Run(string(c.method), func(t *testing.T) {
			// By method, and by an empty Params of the method's type.
			for _, o := range []Options{{Method: c.method}, {Params: c.method.Params()}} {
				o = o.withDefaults()
				if o.Method != c.method {
					t.Errorf("method %q, want %q", o.Method, c.method)
				}
				if got := (loop{o.MaxIter, o.Tol, o.InitScale}); got != c.loop {
					t.Errorf("loop defaults %+v, want %+v", got, c.loop)
				}
				if o.Params != c.params {
					t.Errorf("params %+v, want %+v", o.Params, c.params)
				}
				if o.Dim != 2 || o.Start != StartMDS || o.Starts != 0 || o.Workers != runtime.GOMAXPROCS(0) {
					t.Errorf("Dim %d Start %q Starts %d Workers %d; want 2, mds, 0 (the method's), GOMAXPROCS", o.Dim, o.Start, o.Starts, o.Workers)
				}
			}
		})
	}
	if o := (Options{}).withDefaults(); o.Method != TSTE || o.Params != (TSTEParams{Alpha: 1, Lambda: 0.001}) {
		t.Errorf("default method %q params %+v, want tste with α 1, λ 0.001", o.Method, o.Params)
	}
	if o := (Options{Dim: 5}).withDefaults(); o.Params.(TSTEParams).Alpha != 4 {
		t.Errorf("t-STE α in 5-D %g, want Dim − 1 = 4", o.Params.(TSTEParams).Alpha)
	}
	set := Options{Method: DMOE, Params: DMOEParams{Lambda: 0.7, Margin: 3, Nu: 0.4, Penalty: 0.3, Rho: 1.2, PaperStop: true},
		Dim: 3, MaxIter: 7, Tol: 0.5, InitScale: 0.01, Start: StartRandom, Starts: 3, Workers: 1}
	// (DeepEqual: Options holds a func, nil in both.)
	if o := set.withDefaults(); !reflect.DeepEqual(o, set) {
		t.Errorf("set fields changed: %+v, want %+v", o, set)
	}
	//nolint:paralleltest // a table of checks, not subtests
	for _, p := range []Params{TSTEParams{Alpha: 2.5, Lambda: 0.7}, STEParams{Lambda: 0.5}, GNMDSParams{Lambda: 1, Margin: 2},
		CKLParams{Lambda: 2, Mu: 0.2}, SOEParams{Margin: 0.3, Inits: 2}} {
		if o := (Options{Params: p}).withDefaults(); o.Params != p {
			t.Errorf("set params changed: %+v, want %+v", o.Params, p)
		}
	}
}

// TestValidate: every bound validate documents rejects the value just past
// it (NaN too, for the "must be positive" ones written as !(x > 0)) and
// accepts the value on it.
func TestValidate(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	shared := []struct {
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
		{"InitScale 0", func(o *Options) { o.InitScale = 0 }, false},
		{"InitScale NaN", func(o *Options) { o.InitScale = nan }, false},
		{"Start spectral", func(o *Options) { o.Start = "spectral" }, false},
		{"Starts -1", func(o *Options) { o.Starts = -1 }, false},
		{"Starts 0", func(o *Options) { o.Starts = 0 }, true},
		{"Method mds", func(o *Options) { o.Method = "mds" }, false},
		{"Params of another method", func(o *Options) { o.Params = STEParams{Lambda: 1} }, false},
		{"Params nil", func(o *Options) { o.Params = nil }, false},
	}
	for _, c := range shared {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Method: DMOE}.withDefaults()
			c.set(&o)
			if err := o.validate(); (err == nil) != c.ok {
				t.Errorf("validate() = %v, want ok = %v", err, c.ok)
			}
		})
	}
	//nolint:paralleltest // a table of checks, not subtests
	for _, c := range []struct {
		name   string
		params Params
		ok     bool
	}{
		{"t-STE Alpha 0", TSTEParams{Alpha: 0, Lambda: 0}, false},
		{"t-STE Alpha NaN", TSTEParams{Alpha: nan}, false},
		{"t-STE Lambda −1e-9", TSTEParams{Alpha: 1, Lambda: -1e-9}, false},
		{"t-STE Lambda 0", TSTEParams{Alpha: 1, Lambda: 0}, true},
		{"STE Lambda −1e-9", STEParams{Lambda: -1e-9}, false},
		{"STE Lambda NaN", STEParams{Lambda: nan}, false},
		{"STE Lambda 0", STEParams{Lambda: 0}, true},
		{"GNMDS Margin 0", GNMDSParams{Margin: 0}, false},
		{"GNMDS Margin NaN", GNMDSParams{Margin: nan}, false},
		{"GNMDS Lambda −1e-9", GNMDSParams{Margin: 1, Lambda: -1e-9}, false},
		{"GNMDS Margin 1e-300", GNMDSParams{Margin: 1e-300}, true},
		{"CKL Mu 0", CKLParams{Mu: 0}, false},
		{"CKL Mu NaN", CKLParams{Mu: nan}, false},
		{"CKL Lambda −1e-9", CKLParams{Mu: 0.1, Lambda: -1e-9}, false},
		{"CKL Mu 1e-300", CKLParams{Mu: 1e-300}, true},
		{"SOE Inits 0", SOEParams{Margin: 0.1, Inits: 0}, false},
		{"SOE Inits 1", SOEParams{Margin: 0.1, Inits: 1}, true},
		{"SOE Margin 0", SOEParams{Margin: 0, Inits: 1}, false},
		{"SOE Margin NaN", SOEParams{Margin: nan, Inits: 1}, false},
		{"DMOE Nu −1e-9", DMOEParams{Lambda: 0.3, Margin: 1, Nu: -1e-9, Penalty: 0.1, Rho: 1.05}, false},
		{"DMOE Nu 0", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 0, Penalty: 0.1, Rho: 1.05}, true},
		{"DMOE Penalty 0", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: 0, Rho: 1.05}, false},
		{"DMOE Penalty NaN", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: nan, Rho: 1.05}, false},
		{"DMOE Rho 0.999", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: 0.1, Rho: 0.999}, false},
		{"DMOE Rho NaN", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: 0.1, Rho: nan}, false},
		{"DMOE Rho 1", DMOEParams{Lambda: 0.3, Margin: 1, Nu: 1, Penalty: 0.1, Rho: 1}, true},
		{"DMOE Margin 0", DMOEParams{Lambda: 0.3, Margin: 0, Nu: 1, Penalty: 0.1, Rho: 1}, false},
		{"DMOE Lambda −1e-9", DMOEParams{Lambda: -1e-9, Margin: 1, Nu: 1, Penalty: 0.1, Rho: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// validate sees the params as given (withDefaults would fill
			// the zeros the cases are about).
			o := Options{Method: c.params.Method()}.withDefaults()
			o.Params = c.params
			if err := o.validate(); (err == nil) != c.ok {
				t.Errorf("validate() = %v, want ok = %v", err, c.ok)
			}
		})
	}
}

// TestFitSmallest: Fit accepts the smallest problem it documents (3 items,
// one triplet, one dimension, an iteration cap of 1, one SOE start) and
// rejects 2 items.
func TestFitSmallest(t *testing.T) {
	t.Parallel()
	ts := []triplet.Triplet{{Anchor: 0, Closer: 1, Farther: 2}}
	for _, meth := range Methods {
		res, err := Fit(context.Background(), 3, ts, Options{Params: oneStart(meth), Dim: 1, MaxIter: 1, Seed: 1})
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
