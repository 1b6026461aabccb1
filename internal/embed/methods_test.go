package embed

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRegistry: every registered method round-trips by name, its Params
// name it back, its defaults are its Params type's zero value (what
// Options.Params nil meant before the registry) filled in by
// withDefaults, it reads only known knobs, and it fits a tiny set.
func TestRegistry(t *testing.T) {
	t.Parallel()
	wantTypes := map[Method]Params{
		TSTE: TSTEParams{}, STE: STEParams{}, GNMDS: GNMDSParams{},
		CKL: CKLParams{}, SOE: SOEParams{}, DMOE: DMOEParams{},
	}
	if len(MethodSpecs()) != len(wantTypes) {
		t.Errorf("%d methods registered, want %d", len(MethodSpecs()), len(wantTypes))
	}
	_, ts := randomProblem(3, 12, 2, 300)
	seen := map[Method]bool{}
	for _, s := range MethodSpecs() {
		if seen[s.Method] {
			t.Errorf("%s registered twice", s.Method)
		}
		seen[s.Method] = true
		m, err := ParseMethod(string(s.Method))
		if err != nil || m != s.Method {
			t.Errorf("ParseMethod(%q) = %q, %v", s.Method, m, err)
		}
		if s.Label == "" || s.Description == "" {
			t.Errorf("%s: label %q, description %q: want both", s.Method, s.Label, s.Description)
		}
		p := m.Params()
		if p == nil || p.Method() != m {
			t.Fatalf("%s: Params() = %#v, want parameters of the method", m, p)
		}
		if want, ok := wantTypes[m]; !ok || p != want {
			t.Errorf("%s: defaults %#v, want %#v", m, p, want)
		}
		if err := p.withDefaults(2).validate(); err != nil {
			t.Errorf("%s: defaults filled in do not validate: %v", m, err)
		}
		if len(s.Knobs) == 0 {
			t.Errorf("%s: no knobs", m)
		}
		for _, k := range s.Knobs {
			if !slices.Contains(KnobNames, k) {
				t.Errorf("%s: knob %q is not one of %v", m, k, KnobNames)
			}
		}
		res, err := Fit(context.Background(), 12, ts, Options{Method: m, Dim: 2, Seed: 1, MaxIter: 50})
		if err != nil {
			t.Errorf("%s: fit: %v", m, err)
			continue
		}
		if r, c := res.X.Dims(); r != 12 || c != 2 {
			t.Errorf("%s: result %d×%d, want 12×2", m, r, c)
		}
		if e := TripletError(res.X, ts); !(e < 0.35) {
			t.Errorf("%s: training error %.3f on 300 noise-free triplets, want < 0.35", m, e)
		}
	}
	if _, err := ParseMethod("tsne"); err == nil || !strings.Contains(err.Error(), MethodList()[:4]) {
		t.Errorf("ParseMethod(tsne) = %v, want an error listing the methods", err)
	}
	if Method("tsne").Params() != nil {
		t.Error("an unknown method has parameters")
	}
}

// TestKnobsSetParams: each knob a method reads reaches its Params, and
// Knobs{} gives the defaults.
func TestKnobsSetParams(t *testing.T) {
	t.Parallel()
	k := Knobs{Alpha: 1.5, Lambda: 0.25, Mu: 0.3, Margin: 2, Nu: 0.5, Inits: 3, PaperStop: true}
	want := map[Method]Params{
		TSTE:  TSTEParams{Alpha: 1.5, Lambda: 0.25},
		STE:   STEParams{Lambda: 0.25},
		GNMDS: GNMDSParams{Lambda: 0.25, Margin: 2},
		CKL:   CKLParams{Lambda: 0.25, Mu: 0.3},
		SOE:   SOEParams{Margin: 2, Inits: 3},
		DMOE:  DMOEParams{Lambda: 0.25, Margin: 2, Nu: 0.5, PaperStop: true},
	}
	for _, s := range MethodSpecs() {
		if got := s.Params(k); !reflect.DeepEqual(got, want[s.Method]) {
			t.Errorf("%s: Params(%+v) = %#v, want %#v", s.Method, k, got, want[s.Method])
		}
	}
}

// TestMethodLists: the lists that help texts and forms show come from the
// registry, in its order.
func TestMethodLists(t *testing.T) {
	t.Parallel()
	specs := MethodSpecs()
	names := MethodNames()
	if len(names) != len(specs) || len(Methods) != len(specs) {
		t.Fatalf("%d names, %d methods, %d registered", len(names), len(Methods), len(specs))
	}
	for i, s := range specs {
		if names[i] != string(s.Method) || Methods[i] != s.Method || MethodLabels()[i] != s.Label {
			t.Errorf("entry %d: name %q, method %q, label %q; registered %q (%q)", i, names[i], Methods[i], MethodLabels()[i], s.Method, s.Label)
		}
	}
	if got, want := MethodList(), "tste, ste, gnmds, ckl, soe or dmoe"; got != want {
		t.Errorf("MethodList() = %q, want %q", got, want)
	}
	if _, ok := DefaultMethod.Spec(); !ok {
		t.Errorf("DefaultMethod %s is not registered", DefaultMethod)
	}
}
