package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// writeProblem writes 20 random 2-D points (ids p0..p19), 1,500 noise-free
// triplets over them with a "part" column marking every fourth row "test".
func writeProblem(t *testing.T, dir string) (triplets, truth string) {
	t.Helper()
	rng := triplet.NewRand(1)
	x := triplet.Gaussian(rng, 20, 2, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, 2), 1500)
	var b strings.Builder
	b.WriteString("anchor,closer,farther,part\n")
	for k, tt := range ts {
		part := "train"
		if k%4 == 0 {
			part = "test"
		}
		b.WriteString("p" + strconv.Itoa(tt.Anchor) + ",p" + strconv.Itoa(tt.Closer) + ",p" + strconv.Itoa(tt.Farther) + "," + part + "\n")
	}
	triplets = filepath.Join(dir, "t.csv")
	if err := os.WriteFile(triplets, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = "p" + strconv.Itoa(i)
	}
	var pb bytes.Buffer
	if err := triplet.WritePoints(&pb, ids, x); err != nil {
		t.Fatal(err)
	}
	truth = filepath.Join(dir, "truth.csv")
	if err := os.WriteFile(truth, pb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return triplets, truth
}

func field(t *testing.T, out, prefix string) float64 {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no line %q in output:\n%s", prefix, out)
	return 0
}

func TestEmbedAndEvalCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, truth := writeProblem(t, dir)
	emb := filepath.Join(dir, "e.csv")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"embed", "--method", "ste", "--dim", "2", "--in", in, "--out", emb,
		"--holdout-column", "part", "--holdout-value", "test", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("embed exit %d: %s", code, errb.String())
	}
	if tr, ho := field(t, out.String(), "train error "), field(t, out.String(), "held-out error "); tr > 0.05 || ho > 0.08 {
		t.Errorf("train error %g, held-out %g; want small for noise-free triplets", tr, ho)
	}
	data, err := os.ReadFile(emb)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "item,x1,x2" || len(lines) != 21 || !strings.HasPrefix(lines[1], "p0,") {
		t.Errorf("embedding CSV starts %q with %d lines", lines[:2], len(lines))
	}

	out.Reset()
	code = run(context.Background(), []string{"eval", "--embedding", emb, "--in", in, "--holdout-column", "part", "--holdout-value", "test", "--truth", truth}, &out, &errb)
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errb.String())
	}
	if tau := field(t, out.String(), "mean Kendall tau "); tau < 0.8 {
		t.Errorf("mean Kendall tau %g < 0.8", tau)
	}
	for _, p := range []string{"triplet error ", "kNN precision ", "distance RMSE ", "Procrustes disparity "} {
		field(t, out.String(), p)
	}

	// --holdout F splits with the seed; the held-out error is reported.
	out.Reset()
	code = run(context.Background(), []string{"embed", "--method", "gnmds", "--in", in, "--out", "-", "--holdout", "0.2", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("embed --holdout exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "item,x1,x2\n") {
		t.Errorf("--out - should write the CSV to stdout, got %q", out.String()[:20])
	}
}

func TestEmbedCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := writeProblem(t, dir)
	for _, args := range [][]string{
		{"embed", "--method", "mds", "--in", in, "--out", "-"},
		{"embed", "--in", filepath.Join(dir, "missing.csv"), "--out", "-"},
		{"embed", "--in", in, "--out", "-", "--holdout-column", "part", "--holdout-value", "nope"},
		{"embed", "--in", in, "--out", "-", "--holdout-column", "part"},
		{"embed", "--in", in, "--out", "-", "--start", "spectral"},
		{"embed", "--method", "ste", "--alpha", "2", "--in", in, "--out", "-"},
		{"embed", "--method", "soe", "--lambda", "1", "--in", in, "--out", "-"},
		{"embed", "--method", "tste", "--paper-stop", "--in", in, "--out", "-"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 1 {
			t.Errorf("%v: exit %d, want 1 (stderr %q)", args, code, errb.String())
		} else if !strings.HasPrefix(errb.String(), "closer embed: ") {
			t.Errorf("%v: stderr %q", args, errb.String())
		}
	}
}

// TestEmbedMethodFlags: each method's flags reach its parameters, and a
// flag of another method is refused by name.
func TestEmbedMethodFlags(t *testing.T) {
	t.Parallel()
	all := []string{"--alpha", "1.5", "--lambda", "0.25", "--mu", "0.3", "--margin", "2", "--inits", "3", "--nu", "0.5", "--paper-stop"}
	for _, c := range []struct {
		method embed.Method
		flags  []string
		want   embed.Params
	}{
		{embed.TSTE, []string{"--alpha", "1.5", "--lambda", "0.25"}, embed.TSTEParams{Alpha: 1.5, Lambda: 0.25}},
		{embed.STE, []string{"--lambda", "0.25"}, embed.STEParams{Lambda: 0.25}},
		{embed.GNMDS, []string{"--lambda", "0.25", "--margin", "2"}, embed.GNMDSParams{Lambda: 0.25, Margin: 2}},
		{embed.CKL, []string{"--lambda", "0.25", "--mu", "0.3"}, embed.CKLParams{Lambda: 0.25, Mu: 0.3}},
		{embed.SOE, []string{"--margin", "2", "--inits", "3"}, embed.SOEParams{Margin: 2, Inits: 3}},
		{embed.DMOE, []string{"--lambda", "0.25", "--margin", "2", "--nu", "0.5", "--paper-stop"}, embed.DMOEParams{Lambda: 0.25, Margin: 2, Nu: 0.5, PaperStop: true}},
	} {
		t.Run(string(c.method), func(t *testing.T) {
			t.Parallel()
			parse := func(args []string) (embed.Params, error) {
				fs := flag.NewFlagSet("embed", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				f := addMethodFlags(fs)
				if err := fs.Parse(args); err != nil {
					t.Fatal(err)
				}
				return methodParams(fs, c.method, *f)
			}
			got, err := parse(c.flags)
			if err != nil || got != c.want {
				t.Errorf("params %+v, %v; want %+v", got, err, c.want)
			}
			if got, err := parse(nil); err != nil || got != c.method.Params() {
				t.Errorf("no flags: %+v, %v; want the zero params", got, err)
			}
			// Every other method flag is refused, by its name.
			for i := 0; i < len(all); i++ {
				name, args := all[i], all[i:i+1]
				if name != "--paper-stop" {
					args = all[i : i+2]
					i++
				}
				if slices.Contains(c.flags, name) {
					continue
				}
				if _, err := parse(args); err == nil || !strings.Contains(err.Error(), name+" does not apply") {
					t.Errorf("%s with %s: %v, want a refusal naming it", name, c.method, err)
				}
			}
		})
	}
}

func TestEvalLabelsAndWarmStartCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, truth := writeProblem(t, dir)
	// Labels: the sign of the first true coordinate.
	data, err := os.ReadFile(truth)
	if err != nil {
		t.Fatal(err)
	}
	var lb strings.Builder
	lb.WriteString("item,label\n")
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.Split(line, ",")
		label := "right"
		if strings.HasPrefix(f[1], "-") {
			label = "left"
		}
		lb.WriteString(f[0] + "," + label + "\n")
	}
	labels := filepath.Join(dir, "labels.csv")
	if err := os.WriteFile(labels, []byte(lb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"eval", "--embedding", truth, "--labels", labels}, &out, &errb); code != 0 {
		t.Fatalf("eval --labels exit %d: %s", code, errb.String())
	}
	// On the true points, a label by the sign of x1 is mostly shared with
	// the nearest neighbour.
	if e := field(t, out.String(), "leave-one-out 1-NN error "); e > 0.3 {
		t.Errorf("LOO 1-NN error of the truth %g", e)
	}
	// Warm start from the truth: after one t-STE iteration the ranking is
	// still close to the truth (a random start would give a tau near 0).
	emb := filepath.Join(dir, "warm.csv")
	if code := run(context.Background(), []string{"embed", "--method", "tste", "--in", in, "--out", emb, "--init", truth, "--iter", "1", "--quiet"}, &out, &errb); code != 0 {
		t.Fatalf("embed --init exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"eval", "--embedding", emb, "--truth", truth}, &out, &errb); code != 0 {
		t.Fatalf("eval exit %d: %s", code, errb.String())
	}
	if tau := field(t, out.String(), "mean Kendall tau "); tau < 0.9 {
		t.Errorf("warm start from the truth: mean Kendall tau %g < 0.9", tau)
	}
}

// TestEmbedStartCLI: --start mds fits (GNMDS without a regulariser) as well
// as the random start on the 20-point problem, deterministically, and gives
// another embedding than --start random.
func TestEmbedStartCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := writeProblem(t, dir)
	embed := func(start string) (csv, info string) {
		t.Helper()
		var out, errb bytes.Buffer
		emb := filepath.Join(dir, start+".csv")
		if code := run(context.Background(), []string{"embed", "--method", "gnmds", "--lambda", "-1", "--start", start, "--in", in, "--out", emb,
			"--holdout-column", "part", "--holdout-value", "test", "--quiet"}, &out, &errb); code != 0 {
			t.Fatalf("embed --start %s exit %d: %s", start, code, errb.String())
		}
		data, err := os.ReadFile(emb)
		if err != nil {
			t.Fatal(err)
		}
		return string(data), out.String()
	}
	m1, info := embed("mds")
	if ho := field(t, info, "held-out error "); ho > 0.08 {
		t.Errorf("--start mds: held-out error %g", ho)
	}
	if m2, _ := embed("mds"); m2 != m1 {
		t.Error("--start mds is not deterministic")
	}
	if r, _ := embed("random"); r == m1 {
		t.Error("--start mds and --start random gave the same embedding")
	}
}

// TestEmbedWritesNormalForm: closer embed writes the normal form of
// embed.Normalize (centred, unit root-mean-square radius, principal axes of
// decreasing variance), --raw the fit's own coordinates; both order every
// triplet alike, so eval reports the same triplet error. --starts takes a
// count and refuses a negative one.
func TestEmbedWritesNormalForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := writeProblem(t, dir)
	fit := func(name string, extra ...string) (*mat.Dense, float64) {
		t.Helper()
		emb := filepath.Join(dir, name+".csv")
		var out, errb bytes.Buffer
		args := append([]string{"embed", "--method", "tste", "--in", in, "--out", emb, "--quiet"}, extra...)
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		f, err := os.Open(emb)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, x, err := triplet.ReadPoints(f)
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if code := run(context.Background(), []string{"eval", "--embedding", emb, "--in", in}, &out, &errb); code != 0 {
			t.Fatalf("eval exit %d: %s", code, errb.String())
		}
		return x, field(t, out.String(), "triplet error ")
	}
	norm, e1 := fit("norm")
	raw, e2 := fit("raw", "--raw")
	if e1 != e2 {
		t.Errorf("triplet error %g in the normal form, %g raw", e1, e2)
	}
	if r := embed.RMSRadius(norm); math.Abs(r-1) > 1e-6 {
		t.Errorf("written RMS radius %g, want 1", r)
	}
	if r := embed.RMSRadius(raw); math.Abs(r-1) < 1e-3 {
		t.Errorf("--raw RMS radius %g: not the fit's own scale", r)
	}
	var v [2]float64
	for i := range 20 {
		for c := range 2 {
			v[c] += norm.At(i, c) * norm.At(i, c)
		}
	}
	if !(v[0] >= v[1]) {
		t.Errorf("column variances %v: want the principal axis first", v)
	}
	for _, s := range []string{"-1", "x"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"embed", "--in", in, "--out", "-", "--starts", s}, &out, &errb); code == 0 {
			t.Errorf("--starts %s accepted", s)
		}
	}
	if x, _ := fit("starts", "--starts", "3", "--dim", "1"); x.RawMatrix().Cols != 1 {
		t.Error("--starts 3 --dim 1: not one column")
	}
}
