package triplet

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/csvsafe"
)

// ReadPoints reads coordinates from a CSV file with a header
// item,x1,...,xD (the first column is the item id, the rest numbers), as
// written by WritePoints (whose quote before a formula-like id it removes:
// csvsafe.Unescape). Bad rows are reported with their line numbers.
func ReadPoints(r io.Reader) (ids []string, x *mat.Dense, err error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, errors.New("empty file: expected a header item,x1 with at least one coordinate")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading header: %w", err)
	}
	d := len(header) - 1
	if d < 1 {
		return nil, nil, fmt.Errorf("header %q: expected item,x1,... with at least one coordinate", strings.Join(header, ","))
	}
	var data []float64
	bad := &CSVError{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad.Total++
				if len(bad.Rows) < 20 {
					bad.Rows = append(bad.Rows, RowError{pe.Line, pe.Err.Error()})
				}
				continue
			}
			return nil, nil, fmt.Errorf("reading points: %w", err)
		}
		row := make([]float64, d)
		ok := true
		for j := range d {
			v, perr := strconv.ParseFloat(strings.TrimSpace(rec[j+1]), 64)
			if perr != nil {
				ok = false
				bad.Total++
				if len(bad.Rows) < 20 {
					bad.Rows = append(bad.Rows, RowError{line, fmt.Sprintf("column %d: %q is not a number", j+2, rec[j+1])})
				}
				break
			}
			row[j] = v
		}
		if ok {
			ids = append(ids, csvsafe.Unescape(strings.TrimSpace(rec[0])))
			data = append(data, row...)
		}
	}
	if bad.Total > 0 {
		return nil, nil, bad
	}
	if len(ids) == 0 {
		return nil, nil, errors.New("no points after the header")
	}
	return ids, mat.NewDense(len(ids), d, data), nil
}

// WritePoints writes the rows of x as CSV item,x1,...,xD naming row i by
// ids[i] (or by i when ids is nil). An id a spreadsheet would run as a
// formula gets a leading single quote (csvsafe.Cell).
func WritePoints(w io.Writer, ids []string, x mat.Matrix) error {
	n, d := x.Dims()
	bw := bufio.NewWriter(w)
	cw := csvsafe.NewWriter(bw)
	rec := make([]string, d+1)
	rec[0] = "item"
	for j := range d {
		rec[j+1] = "x" + strconv.Itoa(j+1)
	}
	if err := cw.Write(rec); err != nil {
		return fmt.Errorf("write points: %w", err)
	}
	for i := range n {
		if ids == nil {
			rec[0] = strconv.Itoa(i)
		} else {
			rec[0] = ids[i]
		}
		for j := range d {
			rec[j+1] = strconv.FormatFloat(x.At(i, j), 'g', 8, 64)
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write points: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write points: %w", err)
	}
	return bw.Flush()
}
