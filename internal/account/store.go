// Package account keeps the researchers' accounts in PostgreSQL: admins and
// their passwords, browser sessions, API tokens, and the login throttle
// with its known devices. It is SQL only; the web front decides who may do
// what.
package account

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"
)

// Store is the accounts' store. It is safe for concurrent use.
type Store struct {
	pool         *pgxpool.Pool
	passwordCost int // bcrypt cost of new password hashes (admins.go)

	dummyOnce sync.Once // guards dummyHash, made on first use
	dummyHash []byte    // compared against for an unknown e-mail (admins.go)
}

// Option is a setting of a Store, given to New.
type Option func(*Store)

// PasswordCost sets the bcrypt cost of new admins' password hashes and of
// the comparison an unknown e-mail costs. cmd/web leaves it at
// bcrypt.DefaultCost; tests set bcrypt.MinCost, because each login at the
// default cost takes ~80 ms (several times that under -race). Existing
// hashes keep the cost they were made with.
func PasswordCost(cost int) Option {
	return func(s *Store) { s.passwordCost = cost }
}

// New returns the accounts' store on pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool, passwordCost: bcrypt.DefaultCost}
	for _, o := range opts {
		o(s)
	}
	return s
}

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, f)
}

// isUnique reports whether err is a unique violation (SQLSTATE 23505).
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
