// Package studyfile reads and writes the files a study is exported to and
// imported from: the study bundle (a zip: bundle.go, bundle_read.go) and
// the triplet CSV (triplets.go). It parses and writes the formats, as
// streams with bounded memory, and checks every row and image; the store
// (internal/store) keeps the SQL: store.Store.ExportSnapshot reads a
// study as of one moment, store.Store.ImportStudy stores parsed rows in
// one transaction.
//
// Refusals are study user errors (study.KindInvalid, or
// study.KindConflict for a taken slug), so the HTTP front shows their
// message with a 4xx status.
package studyfile

import (
	"context"
	"fmt"

	"github.com/closer-lab/closer/internal/study"
)

// Report says what an import created.
type Report struct {
	Items        int
	Participants int
	Answers      int
}

// invalid is the user error of a file refused for what it holds.
func invalid(format string, args ...any) error {
	return &study.Error{Kind: study.KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// sliceRows is a study.RowSource of n rows made by row.
type sliceRows[T any] struct {
	n, i int
	row  func(i int) T
	cur  T
}

func (r *sliceRows[T]) Next() bool {
	if r.i >= r.n {
		return false
	}
	r.cur = r.row(r.i)
	r.i++
	return true
}

func (r *sliceRows[T]) Value() T   { return r.cur }
func (r *sliceRows[T]) Err() error { return nil }

// Store is what the study files need of the store (store.Store): a study
// read as of one moment, and a study stored in one transaction.
type Store interface {
	ExportSnapshot(ctx context.Context, studyID int64, f func(sn study.SnapshotReader) error) error
	ImportStudy(ctx context.Context, f func(imp study.ImportWriter) error) error
}
