// Package migrations holds closer's PostgreSQL schema as golang-migrate SQL
// files (NNNNNN_name.up.sql / .down.sql), embedded into the binary and
// applied at start-up by internal/dbmigrate.
package migrations

import "embed"

// FS holds the SQL migration files.
//
//go:embed *.sql
var FS embed.FS
