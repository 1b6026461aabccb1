package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/embed"
)

// TestMethodHelpFromRegistry: the commands that fit an embedding list the
// registered methods in their --method help, accept each of them and
// refuse an unknown one with the registry's list; the command summary
// names every method's label.
func TestMethodHelpFromRegistry(t *testing.T) {
	t.Parallel()
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

// TestProgressLines: report and count overwrite one line, not more often
// than every half second, and not at all when quiet.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false)
	p.report(1, 2.5) // within the first half second: nothing
	if b.Len() != 0 {
		t.Fatalf("printed %q within half a second", b.String())
	}
	p.last = p.last.Add(-time.Second)
	p.report(3, 1.5)
	p.report(4, 1.25) // right after: nothing
	p.last = p.last.Add(-time.Second)
	p.count("fit", 2, 7)
	p.done()
	got := b.String()
	for _, want := range []string{"\riteration 3  loss 1.5  ", "\rfit 2 of 7  "} {
		if !strings.Contains(got, want) {
			t.Errorf("progress %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "iteration 4") || !strings.HasSuffix(got, "\n") {
		t.Errorf("progress %q: want no line within half a second and a final newline", got)
	}
	q := newProgress(&b, true)
	b.Reset()
	q.last = q.last.Add(-time.Second)
	q.count("fit", 1, 2)
	q.done()
	if b.Len() != 0 {
		t.Errorf("quiet progress printed %q", b.String())
	}
}
