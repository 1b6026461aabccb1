package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/embed"
)

// TestMethodHelpFromRegistry: the commands that fit an embedding list the
// registered methods in their --method help, accept each of them and
// refuse an unknown one with the registry's list; the command summary
// names every method's label.
func TestMethodHelpFromRegistry(t *testing.T) {
	list := embed.MethodList()
	for _, name := range []string{"embed", "bootstrap", "curve", "dims"} {
		var out, errb bytes.Buffer
		run(context.Background(), []string{name, "-h"}, &out, &errb)
		help := errb.String()
		if !strings.Contains(help, "method of the folds' fits: "+list) && !strings.Contains(help, "embedding method: "+list) {
			t.Errorf("%s -h does not list the methods as %q:\n%s", name, list, help)
		}
		for _, f := range []string{"-method", "-in", "-seed"} {
			if !strings.Contains(help, "  "+f+" ") {
				t.Errorf("%s -h has no %s flag", name, f)
			}
		}
		errb.Reset()
		if code := run(context.Background(), []string{name, "--method", "nope", "--in", "x.csv"}, &out, &errb); code == 0 ||
			!strings.Contains(errb.String(), strings.Join(embed.MethodNames(), ", ")) {
			t.Errorf("%s --method nope: exit %d, %q: want a failure listing the methods", name, code, errb.String())
		}
	}
	var out bytes.Buffer
	for _, l := range embed.MethodLabels() {
		if !strings.Contains(commands["embed"].summary, l) {
			t.Errorf("embed's summary %q does not name %s", commands["embed"].summary, l)
		}
	}
	// Every registered method's knobs are flags of embed, and a knob of
	// another method is refused naming the method's own.
	in, _ := writeProblem(t, t.TempDir())
	for _, s := range embed.MethodSpecs() {
		for _, k := range embed.KnobNames {
			if slices.Contains(s.Knobs, k) {
				continue
			}
			var errb bytes.Buffer
			code := run(context.Background(), []string{"embed", "--method", string(s.Method), "--" + k + "=1", "--in", in, "--out", "-"}, &out, &errb)
			if code == 0 || !strings.Contains(errb.String(), "does not apply to --method "+string(s.Method)) {
				t.Errorf("embed --method %s --%s: exit %d, %q: want refused", s.Method, k, code, errb.String())
			}
		}
	}
}
