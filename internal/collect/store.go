// Package collect is closer's store: studies, items, participants, questions,
// answers and votes in PostgreSQL through pgx, plus the researchers'
// accounts. It owns the SQL and nothing else; it issues questions by
// dispatching on the study's design (see Scheduler) and records every answer,
// its vote count and the question's state change in one transaction.
package collect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the PostgreSQL store. It is safe for concurrent use, and several
// processes may share one database: all state lives in PostgreSQL.
type Store struct {
	pool       *pgxpool.Pool
	schedulers map[string]Scheduler
}

// New returns a store on pool with the designs closer knows registered
// ("random" for now).
func New(pool *pgxpool.Pool) *Store {
	s := &Store{pool: pool, schedulers: map[string]Scheduler{}}
	s.RegisterDesign(DesignRandom, RandomScheduler{})
	return s
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// RegisterDesign makes a design available to studies under name. It is meant
// to be called at start-up, before the store is used.
func (s *Store) RegisterDesign(name string, sch Scheduler) { s.schedulers[name] = sch }

// Designs returns the names of the registered designs, sorted.
func (s *Store) Designs() []string {
	names := make([]string, 0, len(s.schedulers))
	for n := range s.schedulers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Kind classifies the errors a caller should show to the user.
type Kind int

// The kinds of user-facing errors.
const (
	KindNotFound  Kind = iota + 1 // no such study, question, ...
	KindInvalid                   // input that breaks a rule (422)
	KindForbidden                 // not yours
	KindConflict                  // clashes with what is stored
	KindNotOpen                   // the study does not take this now
	KindUnauthorized
)

// Error is an error whose message is meant for the user.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func userErr(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of a user-facing error in err's chain, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// ErrNotFound is wrapped by the lookups that found nothing.
var ErrNotFound = &Error{Kind: KindNotFound, Msg: "not found"}

func notFound(what string) error { return &Error{Kind: KindNotFound, Msg: what + " not found"} }

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, f)
}

// isUnique reports whether err is a unique violation, on constraint name if
// name is not empty.
func isUnique(err error, name string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return name == "" || pe.ConstraintName == name
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns 128 random bits in lower-case base32 (26 characters).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(b32.EncodeToString(b[:]))
}

// newToken returns a 256-bit random secret, URL-safe base64.
func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// hashToken is how secrets are stored: their sha256.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// completionAlphabet avoids characters easily misread (0/O, 1/I/L).
const completionAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// newCompletionCode returns a random 10-character completion code.
func newCompletionCode() string {
	var b [10]byte
	rand.Read(b[:])
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = completionAlphabet[int(c)%len(completionAlphabet)]
	}
	return string(out)
}
