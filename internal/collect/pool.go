package collect

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrPoolTimeout is returned (wrapped) when no pool connection became free
// within the wait a request's context allows (WithAcquireTimeout).
var ErrPoolTimeout = errors.New("no database connection became free in time")

type acquireTimeoutKey struct{}

// WithAcquireTimeout returns a context under which the store waits at most
// d for a connection of a pool set up by ConfigurePool, and then fails with
// ErrPoolTimeout instead of waiting for as long as ctx allows. Only the wait
// for a connection is bounded: the query itself runs under ctx. Contexts
// without it (background work, the recompute jobs) wait as before.
func WithAcquireTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, acquireTimeoutKey{}, d)
}

// ConfigurePool prepares a pool configuration for the store: it installs
// the hook that makes WithAcquireTimeout work (a pgxpool acquire tracer;
// pgxpool has no acquire timeout of its own). A query tracer already set
// keeps receiving its calls.
func ConfigurePool(cfg *pgxpool.Config) {
	cfg.ConnConfig.Tracer = acquireDeadline{next: cfg.ConnConfig.Tracer}
}

// acquireDeadline is the pool's tracer: it gives each acquisition whose
// context carries an acquire timeout its own deadline.
type acquireDeadline struct{ next pgx.QueryTracer }

func (t acquireDeadline) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	d, ok := ctx.Value(acquireTimeoutKey{}).(time.Duration)
	if !ok || d <= 0 {
		return ctx
	}
	c, cancel := context.WithTimeoutCause(ctx, d, ErrPoolTimeout)
	return &acquireContext{Context: c, cancel: cancel}
}

func (t acquireDeadline) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if c, ok := ctx.(*acquireContext); ok {
		c.cancel()
	}
}

func (t acquireDeadline) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.next == nil {
		return ctx
	}
	return t.next.TraceQueryStart(ctx, conn, data)
}

func (t acquireDeadline) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, conn, data)
	}
}

// acquireContext is the context of one acquisition. pgxpool returns
// ctx.Err() when the wait ends, so Err names the cause (ErrPoolTimeout)
// when the acquisition's own deadline ended it: the caller can then tell a
// busy pool from its own deadline.
type acquireContext struct {
	context.Context
	cancel context.CancelFunc
}

func (c *acquireContext) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == ErrPoolTimeout {
		return ErrPoolTimeout
	}
	return err
}
