package dbmigrate

import (
	"context"

	"github.com/golang-migrate/migrate/v4"
)

// MigrateTo moves closer's schema (not River's) to version v, for tests of
// a single migration.
func MigrateTo(ctx context.Context, databaseURL string, v uint) error {
	return run(ctx, databaseURL, "migrate to", func(m *migrate.Migrate) error { return m.Migrate(v) })
}
