// Package pgtest gives each test its own fresh PostgreSQL database on the
// server named by TEST_DATABASE_URL (default: the local test server), so
// store and handler tests run against real PostgreSQL and never share state.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/dbmigrate"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// NewDB creates a fresh database with closer's migrations applied and
// returns a pool on it and its URL. Both are closed and the database dropped
// when the test ends.
func NewDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	dbURL := EmptyDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dbmigrate.Up(ctx, dbURL); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the drop registered by EmptyDB
	return pool, dbURL
}

// EmptyDB creates a fresh empty database and returns its URL; it is dropped
// when the test ends.
func EmptyDB(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		admin = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to %s (is PostgreSQL running? set TEST_DATABASE_URL): %v", admin, err)
	}
	defer conn.Close(ctx)
	var buf [8]byte
	if _, err := rand.Read(buf[:]); err != nil {
		t.Fatal(err)
	}
	name := "closer_test_" + hex.EncodeToString(buf[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
