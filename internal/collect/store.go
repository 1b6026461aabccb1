// Package collect is closer's collection engine: it admits participants
// (join, tokens, the identity cache), issues their questions by
// dispatching on their arm's design (random, or a stateful design with its
// pool and leases), and records every answer, its vote count and the
// question's state change in one transaction, handing design answers to
// the arm's inbox writer after the commit. The SQL of the entities is
// internal/store's, which the engine embeds; the vocabulary is
// internal/study's.
package collect

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

// Store is the PostgreSQL store. It is safe for concurrent use, and several
// processes may share one database: all state lives in PostgreSQL (what a
// process keeps in memory, the studies' items and the designs' states, it
// checks against a version stored with them).
type Store struct {
	// Store is the SQL of the studies, items, arms, exports and the rest:
	// the engine's callers reach it through the engine.
	*store.Store

	pool       *pgxpool.Pool
	designs    map[string]*DesignScheduler // the stateful designs by name
	items      itemsCache
	identities identityCache
	probe      probeState // the health check's write probe (health.go)
	background *background
	// PendingEvery is how often the sweep Start runs records the answers
	// the designs left in their inboxes (RecordPending); OnPendingError
	// is told when a sweep fails (nil ignores it).
	PendingEvery   time.Duration
	OnPendingError func(error)
}

// DefaultPendingEvery is how often a started store looks for answers the
// designs have not recorded.
const DefaultPendingEvery = 10 * time.Second

// background owns the goroutines a Store runs (the designs' writers, the
// pending sweep): each runs under its context and is counted in wg, so
// that Close can stop them and wait for them before the pool closes.
type background struct {
	mu      sync.Mutex // guards ctx, cancel, started and closing, and orders wg.Add before Close's wg.Wait
	ctx     context.Context
	cancel  context.CancelFunc
	started bool // Start ran
	closing bool
	stop    chan struct{} // closed by Close
	wg      sync.WaitGroup
	running atomic.Int64 // goroutines running now (tests read it)
}

func newBackground() *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, cancel: cancel, stop: make(chan struct{})}
}

// goRun runs f in a goroutine under the background's context; false: the
// store is closing, and f does not run.
func (b *background) goRun(f func(ctx context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return false
	}
	b.wg.Add(1)
	b.running.Add(1)
	ctx := b.ctx
	go func() {
		defer b.wg.Done()
		defer b.running.Add(-1)
		f(ctx)
	}()
	return true
}

// stopping reports whether Close was called: a goroutine finishes the
// transaction it is in and begins no other.
func (b *background) stopping() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// Option is a setting of a Store, given to New.
type Option func(*Store)

// New returns a store on pool with the random design; RegisterDesigns adds
// the stateful ones.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{Store: store.New(pool), pool: pool, designs: map[string]*DesignScheduler{}, probe: probeState{turn: make(chan struct{}, 1)},
		items: newItemsCache(), identities: newIdentityCache(), background: newBackground(), PendingEvery: DefaultPendingEvery}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Start runs the store's background work under ctx: the sweep that
// records the answers the designs left in their inboxes (a process that
// stopped between an answer's commit and its recording, a writer that
// failed) at once and then every PendingEvery, and the designs' writers,
// which answers start as they come (with or without Start: a store that
// is not started records its answers all the same, and RecordPending
// sweeps on demand). Cancelling ctx cancels them; Close stops them and
// waits for them. Start may be called once, after RegisterDesigns.
func (s *Store) Start(ctx context.Context) error {
	b := s.background
	b.mu.Lock()
	if b.closing || b.started {
		b.mu.Unlock()
		return errors.New("store.Start: the store was started or closed before")
	}
	b.started = true
	// The writers started before now (none in a server) keep the context
	// they began with, which Close cancels too.
	stopEarlier := b.cancel
	b.ctx, b.cancel = context.WithCancel(ctx)
	cancel := b.cancel
	b.cancel = func() { cancel(); stopEarlier() }
	b.mu.Unlock()
	every := s.PendingEvery
	if every <= 0 {
		every = DefaultPendingEvery
	}
	b.goRun(func(ctx context.Context) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := s.RecordPending(ctx); err != nil && ctx.Err() == nil && s.OnPendingError != nil {
				s.OnPendingError(err)
			}
			select {
			case <-ctx.Done():
				return
			case <-b.stop:
				return
			case <-t.C:
			}
		}
	})
	return nil
}

// Close stops the store's background work and waits for it, so that no
// goroutine of the store uses the pool after it returns: no writer pass
// begins after Close is called, and the passes in flight finish their
// transaction, until ctx ends; then they are cancelled (their transaction
// rolls back). Either way an answer is recorded in its design once: the
// answers a pass did not commit stay in the inbox for the next process
// (RecordPending). Close returns ctx's error when it had to cancel.
func (s *Store) Close(ctx context.Context) error {
	b := s.background
	b.mu.Lock()
	if !b.closing {
		b.closing = true
		close(b.stop)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("store.Close: cancelled the passes in flight: %w", ctx.Err())
	}
	b.mu.Lock()
	b.cancel()
	b.mu.Unlock()
	<-done
	return err
}

// Ping checks that the database answers on one of the pool's connections.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping the database: %w", err)
	}
	return nil
}

// registerDesign makes a stateful design available to studies under its
// name. It is meant to be called at start-up, before the store is used.
func (s *Store) registerDesign(ds *DesignScheduler) {
	ds.db = s.pool
	ds.background = s.background
	s.designs[ds.name] = ds
	s.Store.AllowDesign(ds.name)
}

// KindOf returns the kind of a user-facing error in err's chain (see
// AsError), or 0.
func KindOf(err error) study.Kind {
	if e, ok := AsError(err); ok {
		return e.Kind
	}
	return 0
}

// AsError returns the user-facing error in err's chain: an *Error the store
// raised, or one that stands for a PostgreSQL failure the user can act on,
// so that no path the store missed can turn these into a 500:
//   - text PostgreSQL cannot store (a NUL character or invalid UTF-8,
//     SQLSTATE 22021 and 22P05) is KindInvalid;
//   - a database that cannot be reached, is shutting down or refuses
//     connections, cannot store now (out of disk, memory or connections,
//     read-only: CannotStoreNow), and a pool with no free connection in
//     time (IsUnavailable) is KindUnavailable.
func AsError(err error) (*study.Error, bool) {
	if err == nil {
		return nil, false
	}
	var e *study.Error
	if errors.As(err, &e) {
		return e, true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == pgerrcode.CharacterNotInRepertoire || pe.Code == pgerrcode.UntranslatableCharacter) {
		return errBadText, true
	}
	if errors.Is(err, ErrPoolTimeout) {
		return errBusy, true
	}
	if IsUnavailable(err) {
		return errUnavailable, true
	}
	return nil, false
}

var (
	errBadText = &study.Error{Kind: study.KindInvalid,
		Msg: "the text contains a NUL character or is not valid UTF-8, which cannot be stored"}
	errBusy = &study.Error{Kind: study.KindUnavailable,
		Msg: "the server is busy; please try again in a few seconds"}
	errUnavailable = &study.Error{Kind: study.KindUnavailable,
		Msg: "the database is unavailable; please try again in a few seconds"}
)

// IsUnavailable reports whether err says the database cannot serve us now,
// whatever the query: the pool waited too long for a free connection
// (ErrPoolTimeout), a connection could not be made (refused, the database
// starting or shutting down, too many connections, connections not
// allowed), the server ended the session (administrator command, crash),
// the connection broke under a query, or the database cannot store now
// (CannotStoreNow: disk full, read-only, ...). A query the caller's context
// cancelled or timed out is not unavailability: it is the request's own
// deadline.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrPoolTimeout) || errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, puddle.ErrClosedPool) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgerrcode.AdminShutdown, pgerrcode.CrashShutdown, pgerrcode.CannotConnectNow,
			pgerrcode.TooManyConnections, pgerrcode.DatabaseDropped, pgerrcode.IdleSessionTimeout:
			return true
		}
		return pgerrcode.IsConnectionException(pe.Code) || CannotStoreNow(pe.Code)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	// A connection that broke under a query: pgconn's own errors (they
	// alone say whether they are safe to retry) around a network error or
	// an unexpected end of the stream.
	var fromPgconn interface{ SafeToRetry() bool }
	if !errors.As(err, &fromPgconn) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// CannotStoreNow reports whether SQLSTATE code says the database cannot
// take this write now, whatever it was, and may later: it is out of
// resources (class 53: disk full 53100, out of memory 53200, too many
// connections 53300, a configured limit 53400), read-only (25006: a
// standby, or default_transaction_read_only), failing to read or write its
// files (58030, an I/O error), or not accepting connections yet (57P03,
// starting up or in recovery). These are unavailability (503 with
// Retry-After), not the request's fault nor a bug (500): the answer was
// not stored, and the client should send it again.
func CannotStoreNow(code string) bool {
	switch code {
	case pgerrcode.ReadOnlySQLTransaction, pgerrcode.IOError, pgerrcode.CannotConnectNow:
		return true
	}
	return pgerrcode.IsInsufficientResources(code)
}

// ErrNotFound is wrapped by the lookups that found nothing.
var ErrNotFound = &study.Error{Kind: study.KindNotFound, Msg: "not found"}

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, f)
}

// inTxFrom runs a transaction that begins with the query sql: its BEGIN
// travels with it in one batch (pgx's Batch.BeginTx), a round trip fewer
// than BEGIN on its own, which every question and answer pays. scan reads
// the query's row; then f runs in the transaction, which commits when both
// return nil.
func (s *Store) inTxFrom(ctx context.Context, sql string, args []any, scan func(pgx.Row) error, f func(pgx.Tx) error) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(sql, args...)
	br := s.pool.SendBatch(ctx, b)
	tx := br.Tx()
	// A panic in scan or f (a bug: the web server answers 500 and goes on)
	// must not keep the connection out of the pool inside its transaction,
	// holding the participant's row lock: roll back, then panic on, as
	// pgx.BeginFunc (inTx) does.
	defer func() {
		if p := recover(); p != nil {
			br.Close()
			if tx != nil {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				tx.Rollback(rctx)
				cancel()
			}
			panic(p)
		}
	}()
	_, err := br.Exec() // the BEGIN
	if err == nil {
		err = scan(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if tx == nil { // no connection: the batch failed before it began
		if err == nil {
			err = errors.New("no transaction")
		}
		return err
	}
	if err == nil {
		err = f(tx)
	}
	if err != nil {
		// A fresh context: the rollback must run even when ctx ended, or
		// the connection goes back to the pool inside the transaction.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		tx.Rollback(rctx)
		return err
	}
	return tx.Commit(ctx)
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
