package embed

import (
	"fmt"
	"slices"
	"strings"
)

// Method names an embedding algorithm.
type Method string

// The embedding methods. Each is registered once in registry below; the
// lists, the name parsing, the defaults and the flags derive from there.
const (
	TSTE  Method = "tste"
	STE   Method = "ste"
	GNMDS Method = "gnmds"
	CKL   Method = "ckl"
	SOE   Method = "soe"
	DMOE  Method = "dmoe"
)

// DefaultMethod is the method of Options with neither Method nor Params,
// and of the commands and settings that name none.
const DefaultMethod = TSTE

// Knobs are the method parameters that flags and settings set by name:
// the union of every registered method's own fields. A zero field means
// the method's default, as in its Params type.
type Knobs struct {
	Alpha, Lambda, Mu, Margin, Nu float64
	Inits                         int
	PaperStop                     bool
}

// The names of Knobs' fields, as flags spell them.
const (
	KnobAlpha     = "alpha"
	KnobLambda    = "lambda"
	KnobMu        = "mu"
	KnobMargin    = "margin"
	KnobNu        = "nu"
	KnobInits     = "inits"
	KnobPaperStop = "paper-stop"
)

// KnobNames are every knob's name, in Knobs' order.
var KnobNames = []string{KnobAlpha, KnobLambda, KnobMu, KnobMargin, KnobNu, KnobInits, KnobPaperStop}

// MethodSpec is one registered method: its name, what reports call it,
// a line on what it does, the knobs it takes and how they make its
// Params. The Params type carries the rest: its defaults (withDefaults),
// checks (validate) and fit function (fit).
type MethodSpec struct {
	// Method is the name settings, forms and flags use.
	Method Method
	// Label is the name in prose and reports ("t-STE").
	Label string
	// Description says in a line what the method does.
	Description string
	// Knobs are the names of the Knobs fields the method reads.
	Knobs []string
	// params builds the method's Params from knobs; params(Knobs{}) is
	// the method's defaults.
	params func(Knobs) Params
}

// Params returns the method's parameters set from k (zero fields: the
// defaults).
func (s MethodSpec) Params(k Knobs) Params { return s.params(k) }

// registry lists every method, in the order used by reports, forms and
// flag help. Adding a method is adding its entry here (and its Params
// type, which fits it).
var registry = []MethodSpec{
	{TSTE, "t-STE", "t-distributed stochastic triplet embedding (van der Maaten and Weinberger 2012): Student-t kernel, heavy tails",
		[]string{KnobAlpha, KnobLambda},
		func(k Knobs) Params { return TSTEParams{Alpha: k.Alpha, Lambda: k.Lambda} }},
	{STE, "STE", "stochastic triplet embedding (van der Maaten and Weinberger 2012): Gaussian kernel",
		[]string{KnobLambda},
		func(k Knobs) Params { return STEParams{Lambda: k.Lambda} }},
	{GNMDS, "GNMDS", "generalised non-metric MDS (Agarwal et al. 2007): hinge on squared distances with a trace regulariser",
		[]string{KnobLambda, KnobMargin},
		func(k Knobs) Params { return GNMDSParams{Lambda: k.Lambda, Margin: k.Margin} }},
	{CKL, "CKL", "crowd kernel learning (Tamuz et al. 2011): the crowd-kernel log-loss with regulariser mu",
		[]string{KnobLambda, KnobMu},
		func(k Knobs) Params { return CKLParams{Lambda: k.Lambda, Mu: k.Mu} }},
	{SOE, "SOE", "soft ordinal embedding (Terada and von Luxburg 2014): squared hinge on distances, best of several starts",
		[]string{KnobMargin, KnobInits},
		func(k Knobs) Params { return SOEParams{Margin: k.Margin, Inits: k.Inits} }},
	{DMOE, "DMOE", "distributional-margin ordinal embedding (Ma et al. 2019): ADMM on the Gram matrix",
		[]string{KnobLambda, KnobMargin, KnobNu, KnobPaperStop},
		func(k Knobs) Params {
			return DMOEParams{Lambda: k.Lambda, Margin: k.Margin, Nu: k.Nu, PaperStop: k.PaperStop}
		}},
}

// Methods lists every registered method, in the order used by reports.
var Methods = func() []Method {
	ms := make([]Method, len(registry))
	for i, s := range registry {
		ms[i] = s.Method
	}
	return ms
}()

// MethodSpecs returns the registered methods, in their order.
func MethodSpecs() []MethodSpec { return slices.Clone(registry) }

// Spec returns m's registration.
func (m Method) Spec() (MethodSpec, bool) {
	for _, s := range registry {
		if s.Method == m {
			return s, true
		}
	}
	return MethodSpec{}, false
}

// ParseMethod returns the method named s (case as in the constants).
func ParseMethod(s string) (Method, error) {
	if spec, ok := Method(s).Spec(); ok {
		return spec.Method, nil
	}
	return "", fmt.Errorf("unknown method %q (want one of %s)", s, strings.Join(MethodNames(), ", "))
}

// MethodNames returns the names of Methods, in their order: what settings,
// forms and flags accept.
func MethodNames() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = string(s.Method)
	}
	return names
}

// MethodList is the names for help text: "tste, ste, gnmds, ckl, soe or
// dmoe".
func MethodList() string {
	names := MethodNames()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// MethodLabels returns the methods' labels, in their order ("t-STE",
// "STE", ...).
func MethodLabels() []string {
	labels := make([]string, len(registry))
	for i, s := range registry {
		labels[i] = s.Label
	}
	return labels
}

// Params returns m's parameters at their defaults (nil for an unknown m).
func (m Method) Params() Params {
	if spec, ok := m.Spec(); ok {
		return spec.params(Knobs{})
	}
	return nil
}
