package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

func kernelCLI(t *testing.T, args ...string) (stdout, stderr string, code int) { //nolint:unparam // the helper returns what the CLI printed; callers so far read only stderr
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"kernel"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// kernelProblem writes a triplet file over items named "fruit<i>" from three
// well-separated clusters, in a k1 landmark design on landmarks 0..5, and
// returns its path and the true cluster of every id.
func kernelProblem(t *testing.T, dir string) (path string, truth map[string]int) {
	t.Helper()
	rng := triplet.NewRand(21)
	n := 60
	x, labels := triplet.GaussianMixture(rng, n, 4, 3, 8)
	o := triplet.NewOracle(x, 0.05, 22)
	var b strings.Builder
	b.WriteString("anchor,closer,farther,participant\n")
	truth = map[string]int{}
	for i := 0; i < n; i++ {
		truth[fmt.Sprintf("fruit%d", i)] = labels[i]
		for l1 := 0; l1 < 6; l1++ {
			for l2 := l1 + 1; l2 < 6; l2++ {
				if i == l1 || i == l2 {
					continue
				}
				tr := o.Answer(i, l1, l2)
				fmt.Fprintf(&b, "fruit%d,fruit%d,fruit%d,p1\n", tr.Anchor, tr.Closer, tr.Farther)
			}
		}
	}
	path = filepath.Join(dir, "triplets.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, truth
}

func kernelReadRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestKernelCLIMatrix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := kernelProblem(t, dir)
	set, err := kernelReadTriplets(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, fix := range []bool{true, false} {
		out := filepath.Join(dir, "k.csv")
		args := []string{"--kind", "k1", "--in", in, "--out", out}
		if !fix {
			args = append(args, "--no-fix")
		}
		if _, errs, code := kernelCLI(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		rows := kernelReadRows(t, out)
		n := set.N()
		if len(rows) != n+1 || rows[0][0] != "item" || len(rows[0]) != n+1 {
			t.Fatalf("matrix shape: %d rows, header %v", len(rows), rows[0][:3])
		}
		f, err := kernel.NewFeatures(kernel.K1, n, set.Triplets, nil)
		if err != nil {
			t.Fatal(err)
		}
		k := kernel.Matrix(f, fix)
		for i := 0; i < n; i++ {
			if rows[0][i+1] != set.IDs[i] || rows[i+1][0] != set.IDs[i] {
				t.Fatalf("ids: header %q row %q, want %q", rows[0][i+1], rows[i+1][0], set.IDs[i])
			}
			for j := 0; j < n; j++ {
				v, err := strconv.ParseFloat(rows[i+1][j+1], 64)
				if err != nil || math.Abs(v-k.At(i, j)) > 1e-12 {
					t.Fatalf("K[%d,%d] = %q, want %v", i, j, rows[i+1][j+1], k.At(i, j))
				}
			}
		}
	}
}

func TestKernelCLIPCAAndClusters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, truth := kernelProblem(t, dir)
	lms := "fruit0,fruit1,fruit2,fruit3,fruit4,fruit5"
	for _, kind := range []string{"k1", "k2"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(dir, kind+"-pca.csv")
			args := []string{"--kind", kind, "--in", in, "--out", out, "--pca", "3"}
			if kind == "k1" {
				args = append(args, "--landmarks", lms)
			}
			if _, errs, code := kernelCLI(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			rows := kernelReadRows(t, out)
			if len(rows) != 61 || strings.Join(rows[0], ",") != "item,x1,x2,x3" {
				t.Fatalf("pca output %d rows, header %v", len(rows), rows[0])
			}
			if _, ok := truth[rows[1][0]]; !ok {
				t.Fatalf("unknown item id %q", rows[1][0])
			}
		})
	}
	out := filepath.Join(dir, "clusters.csv")
	_, errs, code := kernelCLI(t, "--in", in, "--out", out, "--clusters", "3", "--landmarks", lms, "--seed", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := kernelReadRows(t, out)
	if strings.Join(rows[0], ",") != "item,cluster" || len(rows) != 61 {
		t.Fatalf("clusters output: %d rows, header %v", len(rows), rows[0])
	}
	var pred, want []int
	for _, r := range rows[1:] { //nolint:paralleltest // a loop of checks, not a table of subtests
		c, err := strconv.Atoi(r[1])
		if err != nil {
			t.Fatal(err)
		}
		pred = append(pred, c)
		want = append(want, truth[r[0]])
	}
	// Well-separated clusters, 5% errors, all landmark questions: the paper's
	// claim is a purity close to k-means on the points (here 1).
	if p := kernel.Purity(pred, want); p < 0.95 {
		t.Errorf("purity %v, want ≥ 0.95", p)
	}
}

func TestKernelCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := kernelProblem(t, dir)
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("anchor,closer,farther\na,b,c\na,a,c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.csv")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--in", in}, "required"},
		{[]string{"--in", filepath.Join(dir, "missing.csv"), "--out", out}, "missing.csv"},
		{[]string{"--in", bad, "--out", out}, "line 3"},
		{[]string{"--in", in, "--out", out, "--kind", "k3"}, "k1 or k2"},
		{[]string{"--in", in, "--out", out, "--pca", "2", "--clusters", "3"}, "one of"},
		{[]string{"--in", in, "--out", out, "--pca", "61"}, "only 60 items"},
		{[]string{"--in", in, "--out", out, "--clusters", "-1"}, "positive"},
		{[]string{"--in", in, "--out", out, "--landmarks", "fruit0,nope"}, `"nope" is not an item`},
		{[]string{"--in", in, "--out", out, "--landmarks", "fruit0,fruit0"}, "twice"},
		{[]string{"--in", in, "--out", out, "--landmarks", "fruit0,fruit1"}, "not a k1 landmark triplet"},
		{[]string{"--in", in, "--out", out, "--kind", "k2", "--landmarks", "fruit0,fruit1,fruit2,fruit3,fruit4,fruit5"}, "not a k2 landmark triplet"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			_, errs, code := kernelCLI(t, c.args...)
			if code == 0 || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", c.args, code, errs, c.want)
			}
		})
	}
}

func TestKernelCLIHelp(t *testing.T) {
	t.Parallel()
	_, errs, code := kernelCLI(t, "-h")
	if code != 0 {
		t.Fatalf("-h exit %d", code)
	}
	for _, flag := range []string{"-kind", "-in", "-out", "-matrix", "-pca", "-clusters", "-no-fix", "-landmarks", "-seed", "-restarts"} {
		if !strings.Contains(errs, flag) {
			t.Errorf("-h does not explain %s", flag)
		}
	}
}
