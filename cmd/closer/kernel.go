package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

func init() {
	register("kernel", "triplet kernel k1 or k2: the matrix, kernel PCA or kernel k-means clusters", runKernel)
}

const kernelUsage = `usage: closer kernel --kind k1|k2 --in triplets.csv --out FILE [--matrix | --pca M | --clusters C] [flags]

Computes the triplet kernel k1 or k2 of Kleindessner & von Luxburg (2017)
from a triplet CSV (header anchor,closer,farther or head,winner,loser; other
columns ignored), with the contradiction-aware feature map: repeated answers
count, and a question answered both ways is weighted by its vote balance.
By default the diagonal-dominance fix K − λ_min·I (section 2.1) is applied.

Output (item ids are those of the input file), one of:
  --matrix      (default) the n×n kernel as CSV: header item,<id>,<id>,...,
                then one row per item: id,k(id,<id>),...
  --pca M       centered kernel PCA to M components: CSV item,x1,...,xM
  --clusters C  kernel k-means (Jiao & Vert 2016, Algorithm 1) into C
                clusters, best of --restarts seeded runs: CSV item,cluster

--landmarks names the landmark items (ids, comma-separated) when the
triplets come from a landmark design (section 2.3): for k1 every triplet's
two options are landmarks, for k2 its anchor and at least one option. The
compressed feature space of section 2.4 is then used, which scales to tens
of thousands of items for --pca and --clusters.

A summary line (items, triplets, feature columns, time) goes to stderr.

flags:
`

func runKernel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, kernelUsage)
		fs.PrintDefaults()
	}
	var (
		kindS     = fs.String("kind", "k1", "kernel: k1 (items compared as anchors, eq. 2-3) or k2 (items compared as options, eq. 5)")
		in        = fs.String("in", "", "triplet CSV to read (required)")
		out       = fs.String("out", "", "output CSV, - for stdout (required)")
		matrix    = fs.Bool("matrix", false, "write the full kernel matrix (the default output)")
		pcaM      = fs.Int("pca", 0, "write kernel PCA scores with this many components instead")
		clusters  = fs.Int("clusters", 0, "write kernel k-means cluster labels (0..C-1) for this many clusters instead")
		noFix     = fs.Bool("no-fix", false, "leave out the diagonal-dominance fix K − λ_min·I")
		landmarks = fs.String("landmarks", "", "comma-separated ids of the landmark items of a landmark design (compressed feature space)")
		seed      = fs.Uint64("seed", 1, "random seed of kernel k-means (--clusters)")
		restarts  = fs.Int("restarts", 10, "kernel k-means restarts, the best one is kept (--clusters)")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := kernel.ParseKind(*kindS)
	if err != nil {
		return fmt.Errorf("--kind %q: want k1 or k2", *kindS)
	}
	if *in == "" || *out == "" {
		fmt.Fprintln(stderr, "closer kernel: --in and --out are required")
		fs.Usage()
		return errUsage
	}
	modes := 0
	for _, on := range []bool{*matrix, *pcaM != 0, *clusters != 0} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return errors.New("choose one of --matrix, --pca and --clusters")
	}
	if *pcaM < 0 {
		return fmt.Errorf("--pca %d: want a positive number of components", *pcaM)
	}
	if *clusters < 0 {
		return fmt.Errorf("--clusters %d: want a positive number of clusters", *clusters)
	}
	if *restarts < 1 {
		return fmt.Errorf("--restarts %d: want at least 1", *restarts)
	}

	start := time.Now()
	set, err := kernelReadTriplets(*in)
	if err != nil {
		return err
	}
	n := set.N()
	if n == 0 {
		return fmt.Errorf("%s: no triplets", *in)
	}
	if *pcaM > n {
		return fmt.Errorf("--pca %d: the file has only %d items", *pcaM, n)
	}
	if *clusters > n {
		return fmt.Errorf("--clusters %d: the file has only %d items", *clusters, n)
	}
	lm, err := kernelLandmarks(*landmarks, set.IDs)
	if err != nil {
		return err
	}
	read := time.Since(start)

	start = time.Now()
	f, err := kernel.NewFeatures(kind, n, set.Triplets, lm)
	if err != nil {
		if de, ok := errors.AsType[*kernel.DesignError](err); ok {
			t := de.Triplet
			return fmt.Errorf("%s: triplet %d (anchor %s, closer %s, farther %s) %s; check --landmarks",
				*in, de.Index+1, set.IDs[t.Anchor], set.IDs[t.Closer], set.IDs[t.Farther], de.Rule())
		}
		return fmt.Errorf("%s: %w", *in, err)
	}
	fix := !*noFix
	var write func(w *bufio.Writer) error
	what := "matrix"
	switch {
	case *pcaM > 0:
		what = fmt.Sprintf("pca %d", *pcaM)
		var x *mat.Dense
		if fix {
			x, err = f.PCAFixed(*pcaM)
		} else {
			x, err = f.PCA(*pcaM)
		}
		if err != nil {
			return err
		}
		write = func(w *bufio.Writer) error { return triplet.WritePoints(w, set.IDs, x) }
	case *clusters > 0:
		what = fmt.Sprintf("clusters %d", *clusters)
		lab := f.KMeans(*clusters, *restarts, *seed, fix)
		write = func(w *bufio.Writer) error {
			w.WriteString("item,cluster\n")
			for i, id := range set.IDs {
				w.WriteString(csvField(id))
				w.WriteByte(',')
				w.WriteString(strconv.Itoa(lab[i]))
				w.WriteByte('\n')
			}
			return nil
		}
	default:
		k := kernel.Matrix(f, fix)
		write = func(w *bufio.Writer) error { return kernelWriteMatrix(w, set.IDs, k) }
	}
	compute := time.Since(start)
	if err := ctx.Err(); err != nil {
		return err
	}

	start = time.Now()
	if err := kernelWriteFile(*out, stdout, write); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "closer kernel: %s, %s, %d items, %d triplets, %d feature columns (%d nonzero), fix %v; read %.2fs, compute %.2fs, write %.2fs\n",
		kind, what, n, len(set.Triplets), f.Dim, f.NNZ(), fix,
		read.Seconds(), compute.Seconds(), time.Since(start).Seconds())
	return nil
}

// kernelReadTriplets reads a triplet CSV, naming the file in errors.
func kernelReadTriplets(path string) (*triplet.Set, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	set, err := triplet.ReadCSV(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// kernelLandmarks maps comma-separated item ids to indices (nil for "").
func kernelLandmarks(s string, ids []string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	var lm []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		id := strings.TrimSpace(part)
		if id == "" {
			return nil, fmt.Errorf("--landmarks %q: empty id", s)
		}
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("--landmarks: %q is not an item of the triplet file", id)
		}
		if seen[i] {
			return nil, fmt.Errorf("--landmarks: %q named twice", id)
		}
		seen[i] = true
		lm = append(lm, i)
	}
	if len(lm) < 2 {
		return nil, fmt.Errorf("--landmarks: a landmark design needs at least 2 landmarks, got %d", len(lm))
	}
	return lm, nil
}

// kernelWriteMatrix writes the kernel matrix as CSV item,<id>,<id>,....
func kernelWriteMatrix(w *bufio.Writer, ids []string, k *mat.SymDense) error {
	w.WriteString("item")
	for _, id := range ids {
		w.WriteByte(',')
		w.WriteString(csvField(id))
	}
	w.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for i, id := range ids {
		w.WriteString(csvField(id))
		for j := range ids {
			w.WriteByte(',')
			buf = strconv.AppendFloat(buf[:0], k.At(i, j), 'g', -1, 64)
			w.Write(buf)
		}
		if _, err := w.WriteString("\n"); err != nil {
			return err
		}
	}
	return nil
}

// csvField is an id as a CSV cell: a leading single quote if a spreadsheet
// would run it as a formula (csvsafe.Cell), quoted if CSV needs it. The
// matrix is written by hand rather than by csv.Writer for speed.
func csvField(s string) string {
	s = csvsafe.Cell(s)
	if strings.ContainsAny(s, ",\"\r\n") || strings.TrimSpace(s) != s {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// kernelWriteFile writes through a buffer to path, or to stdout for "-",
// and reports write and close errors.
func kernelWriteFile(path string, stdout io.Writer, write func(w *bufio.Writer) error) error {
	if path == "-" {
		w := bufio.NewWriterSize(stdout, 1<<20)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
