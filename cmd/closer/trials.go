package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// formatUse is the help of --format for embed and eval.
const formatUse = "trial format of --in: triplet, odd-one-out or rank:N:K (empty: detected from the header: anchor,closer,farther; item1,item2,item3,odd; or query,option1,…,optionN,choice1,…,choiceK)"

// fileKind returns the format of the trial file at path: format when
// given (it must agree with the header for a rank file's size), else the
// one its header names.
func fileKind(path, format string) (trial.Kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return trial.Kind{}, err
	}
	defer f.Close()
	k, _, err := trial.Sniff(f)
	if err != nil {
		return trial.Kind{}, fmt.Errorf("%s: %w", path, err)
	}
	if format == "" {
		return k, nil
	}
	want, err := trial.ParseKind(format)
	if err != nil {
		return trial.Kind{}, fmt.Errorf("--format: %w", err)
	}
	if want != k {
		return trial.Kind{}, fmt.Errorf("%s: --format %s, but the header is that of a %s file", path, want, k)
	}
	return want, nil
}

// trialFile is an odd-one-out or rank file read into memory.
type trialFile struct {
	kind trial.Kind
	ids  []string
	odd  []trial.OddOneOut
	rank []trial.Rank
}

func (tf *trialFile) len() int { return len(tf.odd) + len(tf.rank) }

// readTrialFile reads the odd-one-out or rank file at path.
func readTrialFile(path string, kind trial.Kind) (*trialFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tf := &trialFile{kind: kind}
	switch kind.Format {
	case trial.FormatOddOneOut:
		s, err := trial.ReadOddOneOut(f, trial.ReadOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tf.ids, tf.odd = s.IDs, s.Trials
	case trial.FormatRank:
		s, err := trial.ReadRank(f, trial.ReadOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tf.ids, tf.rank = s.IDs, s.Trials
	default:
		panic("readTrialFile: not a trial format: " + kind.String())
	}
	return tf, nil
}

// pickTrials returns the trials of tf at the positions idx (as a
// trialFile over the same items).
func (tf *trialFile) pick(idx []int) *trialFile {
	out := &trialFile{kind: tf.kind, ids: tf.ids}
	for _, i := range idx {
		if tf.odd != nil {
			out.odd = append(out.odd, tf.odd[i])
		} else {
			out.rank = append(out.rank, tf.rank[i])
		}
	}
	return out
}

// remap returns tf's trials over the rows of an embedding (row: id → row).
func (tf *trialFile) remap(path string, row map[string]int) (*trialFile, error) {
	idx := make([]int, len(tf.ids))
	for i, id := range tf.ids {
		r, ok := row[id]
		if !ok {
			return nil, fmt.Errorf("%s: item %q is not in the embedding", path, id)
		}
		idx[i] = r
	}
	out := &trialFile{kind: tf.kind}
	for _, t := range tf.odd {
		out.odd = append(out.odd, trial.OddOneOut{Items: [3]int{idx[t.Items[0]], idx[t.Items[1]], idx[t.Items[2]]}, Odd: idx[t.Odd]})
	}
	for _, t := range tf.rank {
		r := trial.Rank{Query: idx[t.Query], Options: make([]int, len(t.Options)), Choices: make([]int, len(t.Choices))}
		for k, o := range t.Options {
			r.Options[k] = idx[o]
		}
		for k, c := range t.Choices {
			r.Choices[k] = idx[c]
		}
		out.rank = append(out.rank, r)
	}
	return out, nil
}

// triplets returns the derived triplets of tf's trials.
func (tf *trialFile) triplets() []triplet.Triplet {
	if tf.odd != nil {
		return trial.OddTriplets(tf.odd)
	}
	return trial.RankTriplets(tf.rank)
}

// fit fits tf natively (derived false) or by opt's method on the derived
// triplets.
func (tf *trialFile) fit(ctx context.Context, derived bool, opt embed.Options) (*embed.Result, error) {
	n := len(tf.ids)
	switch {
	case derived:
		return embed.Fit(ctx, n, tf.triplets(), opt)
	case tf.odd != nil:
		return embed.FitOddOneOut(ctx, n, tf.odd, opt)
	default:
		return embed.FitRank(ctx, n, tf.rank, opt)
	}
}

// printScores prints the format's own score of x on tf's trials, with a
// label ("train", "held-out"): odd-one-out accuracy, or rank top-1
// accuracy; and the error on the derived triplets.
func (tf *trialFile) printScores(w io.Writer, label string, x *mat.Dense) {
	if tf.odd != nil {
		fmt.Fprintf(w, "%s odd-one-out accuracy %.4f (%d trials; chance 1/3)\n", label, embed.OddOneOutAccuracy(x, tf.odd), len(tf.odd))
	} else {
		fmt.Fprintf(w, "%s rank top-1 accuracy %.4f (%d trials; chance 1/%d)\n", label, embed.RankTop1Accuracy(x, tf.rank), len(tf.rank), tf.kind.Rank.N)
	}
	ts := tf.triplets()
	fmt.Fprintf(w, "%s derived triplet error %.4f (%d triplets)\n", label, embed.TripletError(x, ts), len(ts))
}

// embedTrials is closer embed on an odd-one-out or rank file: a native
// fit (or, derived, opt's method on the derived triplets) of the trials
// not held out, written as closer embed writes a triplet fit, with the
// format's own scores on the training and held-out trials.
func embedTrials(ctx context.Context, fi *fitInput, kind trial.Kind, derived bool, opt embed.Options, initPath, out string, raw, quiet bool, stdout, stderr io.Writer) error {
	tf, err := readTrialFile(fi.in, kind)
	if err != nil {
		return err
	}
	train, test := tf, (*trialFile)(nil)
	if fi.holdout > 0 {
		tr, te := fi.holdOutByPosition(tf.len())
		train, test = tf.pick(tr), tf.pick(te)
	}
	if initPath != "" {
		x, err := readPointsFor(initPath, tf.ids)
		if err != nil {
			return err
		}
		opt.Init = x
	}
	prog := newProgress(stderr, quiet)
	opt.Progress = prog.report
	start := time.Now()
	res, err := train.fit(ctx, derived, opt)
	elapsed := time.Since(start)
	prog.done()
	if err != nil {
		return err
	}
	w := stdout
	var file *os.File
	if out != "-" {
		if file, err = os.Create(out); err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	x := res.X
	if !raw {
		x = new(mat.Dense)
		embed.Normalize(x, res.X)
	}
	if err := triplet.WritePoints(w, tf.ids, x); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
	}
	info := stdout
	if out == "-" {
		info = stderr
	}
	how := "native likelihood (t-STE kernel)"
	if derived {
		how = fmt.Sprintf("derived triplets, method %s", opt.Params.Method())
	}
	fmt.Fprintf(info, "format %s, %s, dim %d, %d items, %d training trials, %d iterations, loss %.6g, raw RMS radius %.4g\n",
		kind, how, fi.dim, len(tf.ids), train.len(), res.Iterations, res.Loss, embed.RMSRadius(res.X))
	train.printScores(info, "train", res.X)
	if test != nil && test.len() > 0 {
		test.printScores(info, "held-out", res.X)
	}
	fmt.Fprintf(info, "time %.3f s\n", elapsed.Seconds())
	return nil
}
