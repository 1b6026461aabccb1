package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// writeStudy writes 40 points in 2-D, 3,000 answers over them (10% wrong)
// with a participant column (30 participants of 100 answers).
func writeStudy(t *testing.T, dir string) string {
	t.Helper()
	rng := triplet.NewRand(3)
	x := triplet.Gaussian(rng, 40, 2, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 3), 3000)
	var b strings.Builder
	b.WriteString("anchor,closer,farther,participant\n")
	for k, tt := range ts {
		b.WriteString("i" + strconv.Itoa(tt.Anchor) + ",i" + strconv.Itoa(tt.Closer) + ",i" + strconv.Itoa(tt.Farther) + ",p" + strconv.Itoa(k/100) + "\n")
	}
	path := filepath.Join(dir, "study.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDimsCLI(t *testing.T) {
	t.Parallel()
	in := writeStudy(t, t.TempDir())
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"dims", "--in", in, "--max-dim", "3", "--folds", "4", "--quiet"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	if got := field(t, out.String(), "suggested dim "); got != 2 {
		t.Errorf("suggested dim %g, want 2", got)
	}
	if !strings.Contains(out.String(), "  1  0.") || !strings.Contains(out.String(), "  3  0.") {
		t.Errorf("no table row for dims 1 and 3:\n%s", out.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"dims", "--in", in, "--folds", "1"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "folds outside") {
		t.Errorf("--folds 1: exit %d, %q", code, errb.String())
	}
}

func TestBootstrapCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeStudy(t, dir)
	spread := filepath.Join(dir, "spread.csv")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bootstrap", "--in", in, "--out", spread, "--method", "ste", "--reps", "10",
		"--participant-column", "participant", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "resampling 30 participants") {
		t.Errorf("participants not resampled:\n%s", out.String())
	}
	e := field(t, out.String(), "held-out error ")
	if !(e > 0.1 && e < 0.35) {
		t.Errorf("held-out error %g", e)
	}
	f, err := os.Open(spread)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := "item,x1,x2,rms,stability,cov_1_1,cov_1_2,cov_2_2"; strings.Join(rows[0], ",") != want {
		t.Errorf("header %v, want %s", rows[0], want)
	}
	if len(rows) != 41 {
		t.Fatalf("%d rows, want 41", len(rows))
	}
	for _, r := range rows[1:] {
		rms, _ := strconv.ParseFloat(r[3], 64)
		st, _ := strconv.ParseFloat(r[4], 64)
		if !(rms > 0 && rms < 2) || !(st >= 0 && st <= 1) {
			t.Errorf("row %v: rms %g, stability %g", r, rms, st)
		}
	}
}

func TestCurveCLI(t *testing.T) {
	t.Parallel()
	in := writeStudy(t, t.TempDir())
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"curve", "--in", in, "--method", "ste", "--points", "5", "--target", "0.2", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "error at 5400 answers") || !strings.Contains(out.String(), "answers for error 0.2000") {
		t.Errorf("missing projection lines:\n%s", out.String())
	}
	if strings.Count(out.String(), "\n") < 9 {
		t.Errorf("want 5 curve points:\n%s", out.String())
	}
}
