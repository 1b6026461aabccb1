// Package dbmigrate applies closer's embedded migrations with golang-migrate.
// Its pgx/v5 driver holds a PostgreSQL advisory lock while migrating, so two
// replicas starting together apply each migration once.
package dbmigrate

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/closer-lab/closer/migrations"
)

// Up applies every migration not yet applied. It is a no-op when the schema
// is current.
func Up(ctx context.Context, databaseURL string) error {
	return run(ctx, databaseURL, "migrate up", func(m *migrate.Migrate) error { return m.Up() })
}

// Down reverts every migration, leaving an empty schema.
func Down(ctx context.Context, databaseURL string) error {
	return run(ctx, databaseURL, "migrate down", func(m *migrate.Migrate) error { return m.Down() })
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
	u, err := url.Parse(databaseURL)
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
