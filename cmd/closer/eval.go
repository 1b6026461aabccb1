package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

func init() {
	register("eval", "judge an embedding: triplet error, and Kendall tau, kNN precision, RMSE, Procrustes against true points", runEval)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr,
		"usage: closer eval --embedding embedding.csv [--in triplets.csv] [--truth points.csv] [--labels labels.csv]",
		"\nPrints the triplet error of the embedding on the triplets, and with true",
		"coordinates the mean Kendall tau, kNN precision, distance RMSE and Procrustes",
		"disparity; with labels (CSV item,label) the leave-one-out 1-NN error.",
		"On an odd-one-out or rank file (--format, or detected from the header) it",
		"prints the format's own score (odd-one-out accuracy; rank top-1 accuracy)",
		"and the error on the triplets the trials imply.\n\nflags:",
	)
	var (
		embF   = fs.String("embedding", "", "embedding CSV item,x1,...,xD (required)")
		in     = fs.String("in", "", "triplet, odd-one-out or rank CSV to score the embedding on")
		format = fs.String("format", "", formatUse)
		hcol   = fs.String("holdout-column", "", "score only the rows whose value in this column is --holdout-value")
		hval   = fs.String("holdout-value", "", "value of --holdout-column to score (e.g. Test)")
		truthF = fs.String("truth", "", "true coordinates CSV item,x1,...,xD")
		labelF = fs.String("labels", "", "labels CSV item,label for the leave-one-out nearest-neighbour error")
		k      = fs.Int("k", 0, "k of the kNN precision (0: ceil(log2 n))")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *embF == "" || (*in == "" && *truthF == "" && *labelF == "") {
		fs.Usage()
		return errUsage
	}
	if (*hcol == "") != (*hval == "") {
		return errors.New("--holdout-column and --holdout-value go together")
	}
	f, err := os.Open(*embF)
	if err != nil {
		return err
	}
	ids, x, err := triplet.ReadPoints(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *embF, err)
	}
	n, _ := x.Dims()
	row := make(map[string]int, n)
	for i, id := range ids {
		row[id] = i
	}
	fmt.Fprintf(stdout, "embedding %s: %d items\n", *embF, n)
	kind := trial.Kind{Format: trial.FormatTriplet}
	if *in != "" {
		if kind, err = fileKind(*in, *format); err != nil {
			return err
		}
	}
	if kind.Format != trial.FormatTriplet {
		if *hcol != "" {
			return errors.New("--holdout-column applies to triplet files only")
		}
		tf, err := readTrialFile(*in, kind)
		if err != nil {
			return err
		}
		if tf, err = tf.remap(*in, row); err != nil {
			return err
		}
		tf.printScores(stdout, "format "+kind.String()+":", x)
	} else if *in != "" {
		set, err := readTriplets(*in, *hcol)
		if err != nil {
			return err
		}
		var ts []triplet.Triplet
		for k, t := range set.Triplets {
			if *hcol != "" && set.Groups[k] != *hval {
				continue
			}
			var r [3]int
			for c, v := range [3]int{t.Anchor, t.Closer, t.Farther} {
				i, ok := row[set.IDs[v]]
				if !ok {
					return fmt.Errorf("%s: item %q is not in the embedding", *in, set.IDs[v])
				}
				r[c] = i
			}
			ts = append(ts, triplet.Triplet{Anchor: r[0], Closer: r[1], Farther: r[2]})
		}
		if len(ts) == 0 {
			return fmt.Errorf("%s: no triplets to score", *in)
		}
		fmt.Fprintf(stdout, "triplet error %.4f (%d triplets)\n", embed.TripletError(x, ts), len(ts))
	}
	if *truthF != "" {
		truth, err := readPointsFor(*truthF, ids)
		if err != nil {
			return err
		}
		kk := *k
		if kk <= 0 {
			kk = embed.DefaultK(n)
		}
		fmt.Fprintf(stdout, "mean Kendall tau %.4f\n", embed.MeanKendallTau(truth, x))
		fmt.Fprintf(stdout, "kNN precision %.4f (k = %d)\n", embed.KNNPrecision(truth, x, kk), kk)
		fmt.Fprintf(stdout, "distance RMSE %.6g\n", embed.DistanceRMSE(truth, x))
		fmt.Fprintf(stdout, "Procrustes disparity %.4f\n", embed.Procrustes(truth, x))
	}
	if *labelF != "" {
		labels, err := readLabels(*labelF, ids)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "leave-one-out 1-NN error %.4f\n", embed.LOONNError(x, labels))
	}
	return ctx.Err()
}

// readLabels reads a CSV item,label (header first) and returns the labels
// of ids as small integers. The quote closer puts before a formula-like
// cell (csvsafe.Cell) is removed, as ReadPoints does for the embedding's ids.
func readLabels(path string, ids []string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.TrimLeadingSpace = true
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: expected a header item,label and rows", path)
	}
	byID := map[string]string{}
	for i, r := range recs[1:] {
		if len(r) < 2 {
			return nil, fmt.Errorf("%s: line %d: expected item,label", path, i+2)
		}
		byID[csvsafe.Unescape(strings.TrimSpace(r[0]))] = csvsafe.Unescape(strings.TrimSpace(r[1]))
	}
	code := map[string]int{}
	out := make([]int, len(ids))
	for i, id := range ids {
		l, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("%s: no label for item %q", path, id)
		}
		if _, ok := code[l]; !ok {
			code[l] = len(code)
		}
		out[i] = code[l]
	}
	return out, nil
}
