package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// fitInput holds the flags that embed, bootstrap, curve and dims share:
// the method, the dimension, the triplet CSV, the seed and the hold-out.
type fitInput struct {
	method  string
	dim     int
	in      string
	seed    uint64
	holdout float64
	// hcol and hval pick the held-out rows by a CSV column (embed only).
	hcol, hval string
}

// fitInputFlags say which of fitInput's flags a command defines and
// with what help: the commands differ in their defaults and in what the
// seed and the hold-out serve.
type fitInputFlags struct {
	// method is the --method default; methodUse is what the method is
	// for in the help ("embedding method").
	method    embed.Method
	methodUse string
	// noDim leaves --dim out (dims tries every dimension).
	noDim bool
	// seed is --seed's help.
	seed string
	// holdout is --holdout's help ("": no --holdout), holdoutDefault its
	// default; holdoutColumn adds --holdout-column and --holdout-value.
	holdout        string
	holdoutDefault float64
	holdoutColumn  bool
}

// addFitInput defines the flags of c on fs.
func addFitInput(fs *flag.FlagSet, c fitInputFlags) *fitInput {
	f := new(fitInput)
	fs.StringVar(&f.method, "method", string(c.method), c.methodUse+": "+embed.MethodList())
	if !c.noDim {
		fs.IntVar(&f.dim, "dim", 2, "embedding dimension")
	}
	fs.StringVar(&f.in, "in", "", "triplet CSV (columns anchor,closer,farther) (required)")
	fs.Uint64Var(&f.seed, "seed", 1, c.seed)
	if c.holdout != "" {
		fs.Float64Var(&f.holdout, "holdout", c.holdoutDefault, c.holdout)
	}
	if c.holdoutColumn {
		fs.StringVar(&f.hcol, "holdout-column", "", "hold out the rows whose value in this CSV column is --holdout-value")
		fs.StringVar(&f.hval, "holdout-value", "", "value of --holdout-column that marks held-out rows (e.g. Test)")
	}
	return f
}

// Method parses --method.
func (f *fitInput) Method() (embed.Method, error) { return embed.ParseMethod(f.method) }

// checkHoldoutColumn refuses --holdout-column without --holdout-value
// (or the other way round), and with --holdout.
func (f *fitInput) checkHoldoutColumn() error {
	if (f.hcol == "") != (f.hval == "") {
		return errors.New("--holdout-column and --holdout-value go together")
	}
	if f.hcol != "" && f.holdout > 0 {
		return errors.New("use either --holdout or --holdout-column, not both")
	}
	return nil
}

// read reads --in, keeping the column group (if any) per row.
func (f *fitInput) read(group string) (*triplet.Set, error) { return readTriplets(f.in, group) }

// splitByColumn splits set's triplets into the rows whose --holdout-column
// is not and is --holdout-value, in file order; both must be non-empty.
func (f *fitInput) splitByColumn(set *triplet.Set) (train, test []triplet.Triplet, err error) {
	for k, t := range set.Triplets {
		if set.Groups[k] == f.hval {
			test = append(test, t)
		} else {
			train = append(train, t)
		}
	}
	if len(test) == 0 {
		return nil, nil, fmt.Errorf("%s: no row has %s = %q", f.in, f.hcol, f.hval)
	}
	if len(train) == 0 {
		return nil, nil, fmt.Errorf("%s: every row has %s = %q, nothing to train on", f.in, f.hcol, f.hval)
	}
	return train, test, nil
}

// holdOutByPosition splits the positions 0..n−1 into the training and the
// held-out ones, a seeded --holdout share held out, each part in file
// order (the order the answers were collected in), so that whatever
// belongs to a row (its participant) follows it.
func (f *fitInput) holdOutByPosition(n int) (train, test []int) {
	perm := triplet.NewRand(f.seed).Perm(n)
	nTest := int(float64(n)*f.holdout + 0.5)
	test, train = perm[:nTest], perm[nTest:]
	slices.Sort(test)
	slices.Sort(train)
	return train, test
}

// pick returns the triplets of ts at the positions idx.
func pick(ts []triplet.Triplet, idx []int) []triplet.Triplet {
	var out []triplet.Triplet
	for _, i := range idx {
		out = append(out, ts[i])
	}
	return out
}

// readTriplets reads a triplet CSV, keeping the column group (if any).
func readTriplets(path, group string) (*triplet.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set, err := triplet.ReadCSVWith(f, triplet.ReadOptions{GroupBy: group})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// addMethodFlags defines the flags of embed.Knobs on fs, one per knob; a
// knob's help names the methods that read it (from the registry).
func addMethodFlags(fs *flag.FlagSet) *embed.Knobs {
	k := new(embed.Knobs)
	fs.Float64Var(&k.Alpha, embed.KnobAlpha, 0, "t-STE degrees of freedom (0: max(dim-1, 1))")
	fs.Float64Var(&k.Lambda, embed.KnobLambda, 0, "regularisation weight of "+methodsTaking(embed.KnobLambda)+" (0: the method's default, negative: none)")
	fs.Float64Var(&k.Mu, embed.KnobMu, 0, "CKL mu (0: 0.1)")
	fs.Float64Var(&k.Margin, embed.KnobMargin, 0, "hinge margin of "+methodsTaking(embed.KnobMargin)+" (0: GNMDS 1, SOE 0.1, DMOE gamma0 1)")
	fs.IntVar(&k.Inits, embed.KnobInits, 0, "SOE random initialisations (0: 4)")
	fs.Float64Var(&k.Nu, embed.KnobNu, 0, "DMOE nu (0: 1)")
	fs.BoolVar(&k.PaperStop, embed.KnobPaperStop, false, "DMOE: stop by Ma et al.'s rule (objective change per triplet below 0.001) instead of at convergence; with --dim equal to the number of items this is the paper's Table 1 protocol")
	return k
}

// methodsTaking lists the labels of the methods that read knob: "t-STE,
// STE, GNMDS, CKL and DMOE".
func methodsTaking(knob string) string {
	var labels []string
	for _, s := range embed.MethodSpecs() {
		if slices.Contains(s.Knobs, knob) {
			labels = append(labels, s.Label)
		}
	}
	if len(labels) < 2 {
		return strings.Join(labels, "")
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1]
}

// methodParams builds m's parameters from the flags, refusing a flag that
// was given but is not one of m's (it would otherwise be ignored silently).
func methodParams(fs *flag.FlagSet, m embed.Method, k embed.Knobs) (embed.Params, error) {
	spec, ok := m.Spec()
	if !ok {
		return nil, fmt.Errorf("no parameters for method %s", m)
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err != nil || !slices.Contains(embed.KnobNames, fl.Name) || slices.Contains(spec.Knobs, fl.Name) {
			return
		}
		err = fmt.Errorf("--%s does not apply to --method %s (its parameters: --%s)", fl.Name, m, strings.Join(spec.Knobs, ", --"))
	})
	return spec.Params(k), err
}

// newFlags returns the flags of the command name, writing to stderr; its
// -h prints the usage lines and then the flags.
func newFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		for _, l := range usage {
			fmt.Fprintln(stderr, l)
		}
		fs.PrintDefaults()
	}
	return fs
}
