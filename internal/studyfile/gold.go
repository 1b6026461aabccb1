package studyfile

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// MaxGoldBytes bounds a gold triplet file.
const MaxGoldBytes = 2 << 20

// ReadGold reads a researcher's gold triplets: a CSV with the header
// anchor,closer,farther (other columns ignored) naming the study's items by
// label (labels[i] is item i's); size is the file's size in bytes. It
// refuses a file over MaxGoldBytes, reads as a stream with the limit of
// study.MaxGoldTriplets rows, and checks every row: a
// file with any bad row (an unknown or ambiguous label, a repeated item,
// a missing field) is refused whole, its bad rows listed by line.
func ReadGold(r io.Reader, size int64, labels []string) ([]study.GoldTriplet, error) {
	if size > MaxGoldBytes {
		return nil, invalid("larger than %d MiB (the limit for gold triplets)", MaxGoldBytes>>20)
	}
	index := make(map[string]int, len(labels))
	for i, l := range labels {
		if _, dup := index[l]; dup {
			index[l] = -1 // two items share it
			continue
		}
		index[l] = i
	}
	rows, err := triplet.NewRows(r, triplet.ReadOptions{MaxRows: study.MaxGoldTriplets})
	if err != nil {
		return nil, invalid("%v", err)
	}
	var (
		gold []study.GoldTriplet
		bad  triplet.CSVError
	)
	const maxListed = 20
	for rows.Next() {
		row := rows.Row()
		var idx [3]int
		var problem string
		for k, label := range [3]string{row.Anchor, row.Closer, row.Farther} {
			i, ok := index[label]
			switch {
			case !ok:
				problem = fmt.Sprintf("no item is labelled %q", label)
			case i < 0:
				problem = fmt.Sprintf("more than one item is labelled %q", label)
			}
			if problem != "" {
				break
			}
			idx[k] = i
		}
		if problem != "" {
			bad.Total++
			if len(bad.Rows) < maxListed {
				bad.Rows = append(bad.Rows, triplet.RowError{Line: row.Line, Reason: problem})
			}
			continue
		}
		gold = append(gold, study.GoldTriplet{Line: row.Line, Anchor: idx[0], Closer: idx[1], Farther: idx[2]})
	}
	if err := rows.Err(); err != nil {
		if ce, ok := err.(*triplet.CSVError); ok {
			bad.Total += ce.Total
			bad.Rows = append(bad.Rows, ce.Rows...)
		} else {
			return nil, invalid("%v", err)
		}
	}
	if bad.Total > 0 {
		slices.SortFunc(bad.Rows, func(x, y triplet.RowError) int { return x.Line - y.Line })
		if len(bad.Rows) > maxListed {
			bad.Rows = bad.Rows[:maxListed]
		}
		return nil, invalid("%v; nothing was stored", strings.TrimSpace(bad.Error()))
	}
	return gold, nil
}
