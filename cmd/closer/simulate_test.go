package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func simulateCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"simulate"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// TestSimulateCSV checks the CSV contract of the issue: the exact header,
// one row per checkpoint, empty d_hat for designs without one, numbers in
// range elsewhere.
func TestSimulateCSV(t *testing.T) {
	t.Parallel()
	for _, design := range []string{"landmark-k1", "landmark-k2", "random"} {
		t.Run(design, func(t *testing.T) {
			t.Parallel()
			out, errs, code := simulateCLI(t, "--design", design, "--points", "gmm:90:4:3", "--budget", "1200",
				"--landmarks", "5", "--annotators", "3", "--checkpoints", "400,800", "--csv", "--error", "0.1")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if (design == "random") != strings.Contains(errs, "--landmarks does not apply") {
				t.Errorf("stderr %q", errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if lines[0] != "answers,fallback_share,d_hat,kendall_tau,knn_precision,heldout_error" {
				t.Fatalf("header %q", lines[0])
			}
			if len(lines) != 4 {
				t.Fatalf("%d lines, want header + 3 checkpoints:\n%s", len(lines), out)
			}
			for i, line := range lines[1:] {
				f := strings.Split(line, ",")
				if len(f) != 6 || f[0] != []string{"400", "800", "1200"}[i] || f[2] != "" {
					t.Fatalf("row %q", line)
				}
				for _, v := range []string{f[1], f[3], f[4], f[5]} {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil || x < -1 || x > 1 {
						t.Fatalf("row %q has %q", line, v)
					}
				}
			}
			// 90 points, 5 landmarks: k1 covers 85·10 + 5·6 = 880 comparisons,
			// so the last 320 of 1200 answers are fallbacks; random has none.
			// (90 points rather than 60: with C(n,2) ≤ 3000 feature columns the
			// kernel PCA of k1 on random triplets takes the covariance route, whose
			// eigensolver converged slowly here, about 5 s per checkpoint.)
			last := strings.Split(lines[3], ",")
			want := map[string]string{"landmark-k1": "0.2667", "random": "0.0000"}[design]
			if want != "" && last[1] != want {
				t.Errorf("final fallback share %s, want %s", last[1], want)
			}
		})
	}
}

func TestSimulateBasisReportsDHat(t *testing.T) {
	t.Parallel()
	out, errs, code := simulateCLI(t, "--design", "basis", "--points", "cube:80:2", "--budget", "4000",
		"--annotators", "5", "--checkpoints", "1", "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	f := strings.Split(lines[len(lines)-1], ",")
	if d, err := strconv.Atoi(f[2]); err != nil || d < 1 {
		t.Errorf("basis row %q: want d̂ >= 1", lines[len(lines)-1])
	}
}

// The basis coordinate rule changes the quality figures (the coordinates)
// but not the answers spent, and the header names it.
func TestSimulateBasisCoordinateRule(t *testing.T) {
	t.Parallel()
	rows := map[string][]string{}
	for _, rule := range []string{"median", "rank-difference"} {
		out, errs, code := simulateCLI(t, "--design", "basis", "--points", "gmm:150:3:3:2", "--budget", "20000",
			"--checkpoints", "1", "--coordinates", rule)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", rule, code, errs)
		}
		if !strings.Contains(out, "coordinates "+rule) {
			t.Errorf("%s: header does not name the rule:\n%s", rule, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "20000" {
				rows[rule] = f
			}
		}
		if rows[rule] == nil {
			t.Fatalf("%s: no row at 20000 answers:\n%s", rule, out)
		}
	}
	m, r := rows["median"], rows["rank-difference"]
	if m[len(m)-1] != r[len(r)-1] || m[2] != r[2] {
		t.Errorf("the rule changed the answers used or d̂: %v vs %v", m, r)
	}
	if m[3] == r[3] {
		t.Errorf("the rule did not change tau: %v vs %v", m, r)
	}
}

func TestSimulateTable(t *testing.T) {
	t.Parallel()
	out, errs, code := simulateCLI(t, "--points", "gmm:60:4:3:6", "--budget", "600", "--landmarks", "5", "--checkpoints", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"landmark k1, 5 landmarks, 580 comparisons × 1 repeats = 580 answers to cover", "purity", "design done: true", "coverage 580 of 580"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateCoordsAndLandmarkIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "pts.csv")
	var b strings.Builder
	b.WriteString("item,x1,x2\n")
	for i := range 12 {
		b.WriteString("p" + strconv.Itoa(i) + "," + strconv.Itoa(i%4) + "," + strconv.Itoa(i*i%7) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := simulateCLI(t, "--coords", path, "--landmarks", "p3,p7,p11", "--budget", "40", "--checkpoints", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// 12 items, 3 landmarks: 9·3 + 3·1 = 30 comparisons.
	if !strings.Contains(out, "3 landmarks, 30 comparisons") {
		t.Errorf("output:\n%s", out)
	}
	if _, errs, code := simulateCLI(t, "--coords", path, "--landmarks", "p3,q1"); code != 1 || !strings.Contains(errs, `no item "q1"`) {
		t.Errorf("unknown landmark id: exit %d, %q", code, errs)
	}
}

// cliError is a command line and what its error must say.
type cliError struct {
	args []string
	want string
}

// wantSimulateErrors runs closer simulate on each command line, extra
// after it, and wants exit status 1 and an error mentioning want.
func wantSimulateErrors(t *testing.T, cases []cliError, extra ...string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, errs, code := simulateCLI(t, append(slices.Clip(c.args), extra...)...)
			if code != 1 || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 mentioning %q", c.args, code, errs, c.want)
			}
		})
	}
}

func TestSimulateErrors(t *testing.T) {
	t.Parallel()
	wantSimulateErrors(t, []cliError{
		{[]string{"--design", "greedy"}, `--design "greedy"`},
		{[]string{"--points", "torus"}, `--points "torus"`},
		{[]string{"--points", "cube:10:x"}, `"x" is not a positive integer`},
		{[]string{"--points", "cube", "--coords", "f.csv"}, "either --points or --coords"},
		{[]string{"--coords", "/nonexistent/pts.csv"}, "no such file"},
		{[]string{"--error", "1.5"}, "--error 1.5"},
		{[]string{"--annotators", "0"}, "--annotators 0"},
		{[]string{"--budget", "0"}, "--budget 0"},
		{[]string{"--landmarks", "1"}, `--landmarks "1"`},
		{[]string{"--design", "basis", "--repeats", "2"}, "even"},
		{[]string{"--design", "basis", "--coordinates", "diagonal"}, "unknown coordinate rule"},
		{[]string{"--design", "random", "--coordinates", "median"}, "--coordinates applies to --design basis only"},
		{[]string{"--checkpoints", "0"}, `--checkpoints "0"`},
		{[]string{"--method", "pca"}, `--method "pca"`},
	})
	if _, _, code := simulateCLI(t, "--bogus"); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
}

// TestSimulateActive runs the active design through the CLI: the worker
// refits after the warm-up and every --refit-every answers, the design
// never leaves an annotator without a question, and t-STE on its answers
// beats chance on held-out triplets. Its flags are refused for other
// designs, and bad values are refused with the flag named.
func TestSimulateActive(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		// (information gain under t-STE in 2-D picks easy questions, see
		// docs/active.md, so it is run under CKL here)
		{"--score", "infogain", "--model", "ckl"},
		{"--score", "uncertainty", "--model", "tste"},
	} {
		out, errs, code := simulateCLI(t, append([]string{"--design", "active", "--points", "gaussian:40:2", "--budget", "700",
			"--warmup", "5", "--pool", "50", "--refit-every", "100", "--candidates", "200", "--method", "tste",
			"--annotators", "2", "--checkpoints", "200,700"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		// Warm-up 200 answers: fits after 200, 300, ..., 600.
		if !strings.Contains(out, "refitted the embedding 5 times") || !strings.Contains(out, "0 fallback answers") {
			t.Errorf("%v: output\n%s", args, out)
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 8 && f[0] == "700" {
				if e, err := strconv.ParseFloat(f[5], 64); err != nil || e > 0.2 {
					t.Errorf("%v: held-out error %q after 700 answers on 40 points in 2-D", args, f[5])
				}
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--design", "random", "--model", "ckl"}, "--model applies to --design active only"},
		{[]string{"--design", "landmark-k1", "--refit-every", "5"}, "--refit-every applies to --design active only"},
		{[]string{"--design", "active", "--score", "margin"}, "--score"},
		{[]string{"--design", "active", "--model", "soe"}, "--model"},
		{[]string{"--design", "active", "--warmup", "0"}, "--warmup 0"},
		{[]string{"--design", "active", "--candidates", "0"}, "--candidates 0"},
		{[]string{"--design", "active", "--pool", "-1"}, "--pool -1"},
		{[]string{"--design", "active", "--refit-every", "-2"}, "--refit-every -2"},
	} {
		_, errs, code := simulateCLI(t, append(c.args, "--points", "gaussian:20:2", "--budget", "10")...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error naming %q", c.args, code, errs, c.want)
		}
	}
}

// TestSimulateArms runs two arms on one crowd through the CLI, as CSV: a
// row per arm at every checkpoint, equal shares of annotators and answers,
// 10% of the answers held out (the default with --arms), errors in range
// on the test set and on the fresh held-out triplets; the same seed gives
// the same output.
func TestSimulateArms(t *testing.T) {
	t.Parallel()
	args := []string{"--arms", "active:0.5,random:0.5", "--points", "gaussian:50:3", "--budget", "2000", "--warmup", "5",
		"--candidates", "200", "--method", "tste", "--annotators", "4", "--per-annotator", "20", "--checkpoints", "1000,2000", "--csv"}
	out, errs, code := simulateCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "answers,test_answers,arm,annotators,arm_answers,fallback_share,d_hat,kendall_tau,knn_precision,test_error,heldout_error" {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines) != 5 {
		t.Fatalf("%d lines, want header + 2 checkpoints × 2 arms:\n%s", len(lines), out)
	}
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		wantAnswers := []string{"1000", "2000"}[i/2]
		// 4 annotators × 20 questions: every 80 answers, 4 annotators
		// finish; 2 of each one's 20 are held out, so at 2000 answers 25
		// waves of 4, 50 each, 900 answers per arm and 200 held out.
		if len(f) != 11 || f[0] != wantAnswers || f[2] != []string{"active", "random"}[i%2] || f[6] != "" {
			t.Fatalf("row %q", line)
		}
		if i >= 2 && (f[1] != "200" || f[3] != "50" || f[4] != "900") {
			t.Errorf("row %q: want 200 held out, 50 annotators and 900 answers per arm", line)
		}
		for _, v := range []string{f[5], f[7], f[8], f[9], f[10]} {
			if x, err := strconv.ParseFloat(v, 64); err != nil || x < -1 || x > 1 {
				t.Fatalf("row %q has %q", line, v)
			}
		}
	}
	if again, _, _ := simulateCLI(t, args...); again != out {
		t.Errorf("the same seed gave a different run:\n%s\nthen\n%s", out, again)
	}

	// Two arms of one design with different scores, as a table.
	out, errs, code = simulateCLI(t, "--arms", "active/infogain-ckl:0.5,active/uncertainty:0.5", "--points", "gaussian:30:2", "--budget", "600",
		"--warmup", "3", "--candidates", "100", "--method", "tste", "--annotators", "2", "--per-annotator", "30", "--checkpoints", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# arm active/infogain-ckl, share 0.5: active, infogain scores under the ckl model",
		"# arm active/uncertainty, share 0.5: active, uncertainty scores under the tste model",
		"30 questions each; 10% of every annotator's questions held out", "test-error", "; 60 held out"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A single design with a held-out share runs as one arm, the table with
// the test set's columns.
func TestSimulateDesignWithHeldout(t *testing.T) {
	t.Parallel()
	out, errs, code := simulateCLI(t, "--design", "random", "--points", "cube:30:2", "--budget", "500", "--heldout-share", "0.2",
		"--annotators", "2", "--checkpoints", "1", "--method", "tste")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"no limit of questions per annotator; 20% of every annotator's questions held out", "# arm random, share 1: random questions",
		"# 500 answers in 250 rounds from 2 annotators; 100 held out", "# arm random: 2 annotators, 400 answers"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateArmsErrors(t *testing.T) {
	t.Parallel()
	wantSimulateErrors(t, []cliError{
		{[]string{"--arms", "active:0.5,random:0.4"}, "the arms' shares sum to 0.9, want 1"},
		{[]string{"--arms", "active:0.5,random:0.5000001"}, "the arms' shares sum to 1.0000001, want 1"},
		{[]string{"--arms", "active:0.5,active:0.5"}, "arm active is given twice"},
		{[]string{"--arms", "greedy:1"}, `unknown design "greedy"`},
		{[]string{"--arms", "active:0,random:1"}, `arm active has share "0", want a positive number`},
		{[]string{"--arms", "active:-0.5,random:1.5"}, `share "-0.5"`},
		{[]string{"--arms", "active:half,random:0.5"}, `share "half"`},
		{[]string{"--arms", "active"}, `"active" is not NAME:SHARE`},
		{[]string{"--arms", " "}, "--arms is empty"},
		{[]string{"--arms", "random:0.5,,active:0.5"}, `"" is not NAME:SHARE`},
		{[]string{"--arms", "random/fast:1"}, "random takes no settings"},
		{[]string{"--arms", "active/margin:1"}, `setting "margin"`},
		{[]string{"--arms", "active/infogain-uncertainty:1"}, "two scores"},
		{[]string{"--arms", "basis/fast:1"}, "basis takes extra"},
		{[]string{"--arms", "landmark-k1/1:1"}, "number of landmarks >= 2"},
		{[]string{"--design", "random", "--arms", "random:1"}, "either --design or --arms"},
		{[]string{"--heldout-share", "1"}, "--heldout-share 1"},
		{[]string{"--arms", "random:1", "--heldout-share", "-0.1"}, "--heldout-share -0.1"},
		{[]string{"--per-annotator", "-1"}, "--per-annotator -1"},
		{[]string{"--arms", "random:0.5,landmark-k1:0.5", "--model", "ckl"}, "--model applies to active arms only, and --arms has none"},
		{[]string{"--arms", "random:1", "--extra"}, "--extra applies to basis arms only"},
		{[]string{"--arms", "random:0.5,basis:0.5", "--method", "kpca"}, "basis arms"},
		{[]string{"--arms", "random:0.5,basis:0.5", "--repeats", "2"}, "arm basis: "},
	}, "--points", "gaussian:20:2", "--budget", "10")
}

// TestSimulateProject: --project fits the learning curve of the checkpoints
// and prints the answers for the target and the error at twice the budget;
// it refuses arms and too few checkpoints.
func TestSimulateProject(t *testing.T) {
	t.Parallel()
	out, errs, code := simulateCLI(t, "--design", "random", "--points", "gaussian:40:2", "--budget", "2000",
		"--checkpoints", "250,500,750,1000,1500,2000", "--method", "tste", "--dim", "2", "--project", "0.05")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Log(out)
	for _, want := range []string{"# learning curve of the held-out error: e(n) = ", "# error at 4000 answers: 0.", "# answers for error 0.0500: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	if _, errs, code := simulateCLI(t, "--design", "random", "--points", "gaussian:40:2", "--budget", "400", "--checkpoints", "200,400", "--project", "0.1"); code == 0 || !strings.Contains(errs, "at least 4 checkpoints") {
		t.Errorf("2 checkpoints: exit %d, %q", code, errs)
	}
}
