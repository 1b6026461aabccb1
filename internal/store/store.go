// Package store is closer's SQL: studies, items and their images, arms,
// participants' listing and exclusion, runs and recompute settings, the
// dashboard's reads, exports, imports, snapshots, upload reports and study
// deletion, in PostgreSQL through pgx, one file per entity. It holds no
// state besides the pool and the designs studies may use: the collection
// engine (internal/collect) issues and records questions on top of it.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the SQL store. It is safe for concurrent use once its designs
// are allowed (AllowDesign, at start-up).
type Store struct {
	pool    *pgxpool.Pool
	designs map[string]bool // the stateful designs studies may use, besides random
}

// New returns a store on pool whose studies may use the random design;
// AllowDesign adds the stateful ones the engine runs.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, designs: map[string]bool{}}
}

// AllowDesign lets studies use the stateful design name. It is meant to be
// called at start-up, before the store is used.
func (s *Store) AllowDesign(name string) { s.designs[name] = true }

// knownDesign reports whether studies may use design.
func (s *Store) knownDesign(design string) bool {
	return design == study.DesignRandom || s.designs[design]
}

// Designs returns the names of the designs studies may use, sorted.
func (s *Store) Designs() []string {
	names := []string{study.DesignRandom}
	for n := range s.designs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, f)
}

// wrap prefixes a non-nil *errp with the operation that failed, as the
// methods defer it (pkgsite's derrors.Wrap): format and args name the
// method as it was called, with the arguments that say what it worked on
// (bare, %q for text): "store.StudyBySlug(\"pilot\"): study not found".
// The methods of an import, a snapshot or an image reader name their type
// (store.Snapshot.Items()). %w keeps what callers look for in the chain:
// a *study.Error (whose Msg, what users see, is unchanged), pgx.ErrNoRows,
// the context's errors.
func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

// isUnique reports whether err is a unique violation (SQLSTATE 23505).
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
