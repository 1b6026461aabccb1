// Package dbmigrate applies closer's embedded migrations with golang-migrate,
// then River's own migrations (the background-job tables), so one call
// brings a database to the schema the binary expects. golang-migrate's pgx/v5
// driver holds a PostgreSQL advisory lock while migrating and River's run in
// one transaction under another, so two replicas starting together apply
// each migration once.
package dbmigrate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/closer-lab/closer/migrations"
)

// Up applies every migration not yet applied, ours then River's. It is a
// no-op when the schema is current.
func Up(ctx context.Context, databaseURL string) error {
	if err := run(ctx, databaseURL, "migrate up", func(m *migrate.Migrate) error { return m.Up() }); err != nil {
		return err
	}
	return river(ctx, databaseURL, rivermigrate.DirectionUp)
}

// Down reverts every migration, River's then ours, leaving an empty schema.
func Down(ctx context.Context, databaseURL string) error {
	if err := river(ctx, databaseURL, rivermigrate.DirectionDown); err != nil {
		return err
	}
	return run(ctx, databaseURL, "migrate down", func(m *migrate.Migrate) error { return m.Down() })
}

// riverLockKey is the advisory lock serialising River migrations across
// replicas ("closer-r" as 64 bits).
const riverLockKey = 0x636c6f7365722d72

// river applies River's migrations while holding riverLockKey on a separate
// connection. (River's migrations cannot share one transaction: one adds an
// enum value that a later one uses.)
func river(ctx context.Context, databaseURL string, dir rivermigrate.Direction) error {
	op := "migrate river " + string(dir)
	connURL, err := withoutPoolParams(databaseURL)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	lock, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return fmt.Errorf("%s: connect: %w", op, err)
	}
	defer lock.Close(context.WithoutCancel(ctx))
	if _, err := lock.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(riverLockKey)); err != nil {
		return fmt.Errorf("%s: lock: %w", op, err)
	}
	// A failed unlock needs no handling: closing lock (deferred above) ends
	// the session and with it the lock.
	defer func() {
		_, _ = lock.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(riverLockKey))
	}()

	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("%s: connect: %w", op, err)
	}
	defer pool.Close()
	opts := &rivermigrate.MigrateOpts{}
	if dir == rivermigrate.DirectionDown {
		// Down only if River's tables exist (an empty or half-built schema has none).
		var exists bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass('river_migration') IS NOT NULL").Scan(&exists); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if !exists {
			return nil
		}
		opts.TargetVersion = -1
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if _, err := migrator.Migrate(ctx, dir, opts); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Version returns the current schema version and whether it is dirty (a
// migration failed half-way); version 0 means none applied.
func Version(ctx context.Context, databaseURL string) (version uint, dirty bool, err error) {
	err = run(ctx, databaseURL, "migrate version", func(m *migrate.Migrate) error {
		var verr error
		version, dirty, verr = m.Version()
		if errors.Is(verr, migrate.ErrNilVersion) {
			return nil
		}
		return verr
	})
	return version, dirty, err
}

func run(ctx context.Context, databaseURL, op string, f func(*migrate.Migrate) error) error {
	dbURL, err := driverURL(databaseURL)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return fmt.Errorf("%s: open embedded migrations: %w", op, err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, dbURL)
	if err != nil {
		return fmt.Errorf("%s: connect: %w", op, err)
	}
	defer m.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			m.GracefulStop <- true
		case <-done:
		}
	}()
	if err := f(m); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// driverURL turns a postgres:// URL into the pgx5:// form golang-migrate's
// pgx/v5 driver registers under, keeping the rest.
func driverURL(databaseURL string) (string, error) {
	plain, err := withoutPoolParams(databaseURL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(plain)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	switch u.Scheme {
	case "postgres", "postgresql", "pgx5":
		u.Scheme = "pgx5"
	default:
		return "", fmt.Errorf("DATABASE_URL: scheme %q, expected postgres://", u.Scheme)
	}
	return u.String(), nil
}

// withoutPoolParams drops pgxpool's own settings (pool_max_conns and the
// other pool_* parameters, which size the app's pool) from a postgres://
// URL. The migrations connect without a pool, and a plain connection
// would send them to PostgreSQL as run-time parameters, which it refuses
// ("unrecognized configuration parameter"), stopping the server at start.
func withoutPoolParams(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	q := u.Query()
	dropped := false
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
			dropped = true
		}
	}
	if !dropped {
		return databaseURL, nil
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
