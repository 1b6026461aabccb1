package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/simulate"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// writeTrialFiles writes 600 noise-free odd-one-out trials and 300 rank
// 8-choose-2 trials over 30 random 2-D points (ids are the indices).
func writeTrialFiles(t *testing.T, dir string) (odd, rank string) {
	t.Helper()
	rng := triplet.NewRand(7)
	x := triplet.Gaussian(rng, 30, 2, 1)
	o := simulate.NewTrialOracle(x, 0, 8)
	var b bytes.Buffer
	if err := trial.WriteOddOneOut(&b, nil, simulate.RandomOddOneOut(rng, o, 600)); err != nil {
		t.Fatal(err)
	}
	odd = filepath.Join(dir, "odd.csv")
	if err := os.WriteFile(odd, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	spec := trial.RankSpec{N: 8, K: 2}
	if err := trial.WriteRank(&b, nil, spec, simulate.RandomRank(rng, o, spec, 300)); err != nil {
		t.Fatal(err)
	}
	rank = filepath.Join(dir, "rank.csv")
	if err := os.WriteFile(rank, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return odd, rank
}

// TestEmbedEvalTrialFiles: closer embed detects each format from the
// header, fits it natively and with --derived, reports the format's own
// held-out score well above chance; closer eval scores the embedding on
// the file. The bounds are margins under what the seeds give (odd-one-out
// .833 native, .850 derived; rank top-1 .767 native, .900 STE on the
// derived triplets, when written).
func TestEmbedEvalTrialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd, rank := writeTrialFiles(t, dir)
	for _, c := range []struct {
		in, score string
		min       float64
		extra     []string
	}{
		{odd, "held-out odd-one-out accuracy ", 0.7, nil},
		{odd, "held-out odd-one-out accuracy ", 0.7, []string{"--derived", "--format", "odd-one-out"}},
		{rank, "held-out rank top-1 accuracy ", 0.45, []string{"--format", "rank:8:2"}},
		{rank, "held-out rank top-1 accuracy ", 0.45, []string{"--derived", "--method", "ste"}},
	} {
		emb := filepath.Join(dir, "e.csv")
		var out, errb bytes.Buffer
		args := append([]string{"embed", "--in", c.in, "--out", emb, "--holdout", "0.2", "--quiet"}, c.extra...)
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		s := field(t, out.String(), c.score)
		t.Logf("%v: %s%.3f", c.extra, c.score, s)
		if s < c.min {
			t.Errorf("%v: %s%.3f < %.2f", args, c.score, s, c.min)
		}
		field(t, out.String(), "held-out derived triplet error ")
		out.Reset()
		if code := run(context.Background(), []string{"eval", "--embedding", emb, "--in", c.in}, &out, &errb); code != 0 {
			t.Fatalf("eval exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "accuracy") || !strings.Contains(out.String(), "derived triplet error") {
			t.Errorf("eval output %q", out.String())
		}
	}
	for _, args := range [][]string{
		{"embed", "--in", odd, "--out", "-", "--format", "rank:8:2"}, // the header disagrees
		{"embed", "--in", odd, "--out", "-", "--method", "ste"},      // native takes t-STE only
		{"embed", "--in", odd, "--out", "-", "--holdout-column", "x", "--holdout-value", "y"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code == 0 {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestSimulateFormats: closer simulate --format runs each format, at
// random and actively, with both fits and prints a CSV row per
// checkpoint and fit; flags of the triplet designs are refused.
func TestSimulateFormats(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"odd-one-out", "rank:8:2", "odd-one-out --design active", "rank:8:2 --design active"} {
		var out, errb bytes.Buffer
		args := append([]string{"simulate", "--format"}, strings.Fields(f)...)
		args = append(args, "--points", "gaussian:40:2", "--budget", "300", "--test-trials", "200", "--checkpoints", "2", "--csv")
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 5 || lines[0] != "trials,derived_triplets,fit,score,test_triplet_error,heldout_error,kendall_tau" {
			t.Errorf("%s: output %q", f, out.String())
		}
	}
	for _, args := range [][]string{
		{"simulate", "--format", "odd-one-out", "--design", "basis"},
		{"simulate", "--format", "odd-one-out", "--arms", "random:1"},
		{"simulate", "--format", "rank:10:2"},
		{"simulate", "--fit", "native"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code == 0 {
			t.Errorf("%v accepted", args)
		}
	}
}
