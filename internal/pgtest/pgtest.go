// Package pgtest gives each test its own fresh PostgreSQL database on the
// server named by TEST_DATABASE_URL (default: the local test server), so
// store and handler tests run against real PostgreSQL and never share state.
//
// # The template database
//
// Applying every migration (ours and River's) costs a second or more per
// test on a loaded machine; copying a migrated database costs about what
// creating an empty one does. NewDB therefore copies (CREATE DATABASE ...
// TEMPLATE) a template database that holds the migrations and nothing else.
// The template is named after a hash of what it holds: closer_tpl_<hash of
// templateRecipe, the role that builds it (its tables belong to that role),
// the embedded migration files and River's migrations>. So
//
//   - it is built at most once per migration set, role and server, and then
//     kept: every later test binary, of any package and of any checkout
//     using the same server, finds it by name and copies it;
//   - a changed migration (a new file, or an edit during development) gives
//     a new name, and so a new template: a stale template is never used;
//   - concurrent builders cannot clash: each migrates a database of its own
//     (closer_tplbuild_<hash>_<random>) and only then renames it to the
//     template's name. The rename is atomic, so the name only ever denotes
//     a complete template; a builder that loses the race (the name exists)
//     drops its build and uses the winner's;
//   - the template is marked IS_TEMPLATE (DROP DATABASE refuses it) and
//     ALLOW_CONNECTIONS false: nobody, not even a superuser, can open a
//     session on it. PostgreSQL refuses to copy a database others are
//     connected to, so this is what keeps every copy possible. Copies made
//     at the same time do not block each other (each takes a share lock on
//     the template).
//
// Templates of other migration sets (other branches, older commits) are
// dropped when a new template is built and they are more than a day old
// (the build time is in the database's comment). A test binary still using
// one then finds it gone (CREATE DATABASE fails with invalid_catalog_name),
// builds it again and retries. Builds left behind by a killed test binary
// are dropped an hour after they started.
//
// If dbmigrate.Up ever does more than apply the migration files (seed rows,
// say), bump templateRecipe so that existing templates are not reused.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/migrations"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// templateRecipe is part of the template's hash: bump it when the way the
// template is built changes without a migration file changing.
const templateRecipe = "1"

const (
	templatePrefix = "closer_tpl_"
	buildPrefix    = "closer_tplbuild_"
	testPrefix     = "closer_test_"
	commentPrefix  = "closer pgtest, built "
	// staleTemplate is how old another migration set's template must be
	// before a build drops it.
	staleTemplate = 24 * time.Hour
	// staleBuild is how old an unfinished build must be before a build
	// drops it (a build takes seconds).
	staleBuild = time.Hour
	// staleTest is how old a test database must be before a sweep drops it
	// (longer than make test's 30 min test timeout).
	staleTest = time.Hour
)

// NewDB creates a fresh database with closer's migrations applied (a copy
// of the template database) and returns a pool on it and its URL. Both are
// closed and the database dropped when the test ends.
func NewDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	admin := adminURL()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := connect(t, ctx, admin)
	defer conn.Close(ctx)
	var dbURL string
	for attempt := 0; ; attempt++ {
		tpl, err := templates.get(ctx, t, admin, conn)
		if err != nil {
			t.Fatalf("pgtest: template: %v", err)
		}
		dbURL, err = create(t, ctx, conn, admin, tpl)
		var pgErr *pgconn.PgError
		if err != nil && attempt == 0 && errors.As(err, &pgErr) && pgErr.Code == "3D000" {
			// invalid_catalog_name: another binary dropped the template as
			// stale since we looked it up. Build it again.
			t.Logf("pgtest: template %s vanished (%v); building it again", tpl, err)
			templates.forget(admin)
			continue
		}
		if err != nil {
			t.Fatalf("pgtest: create database from template %s: %v", tpl, err)
		}
		break
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the drop registered by create
	return pool, dbURL
}

// EmptyDB creates a fresh empty database (no migrations applied) and
// returns its URL; it is dropped when the test ends.
func EmptyDB(t testing.TB) string {
	t.Helper()
	admin := adminURL()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connect(t, ctx, admin)
	defer conn.Close(ctx)
	dbURL, err := create(t, ctx, conn, admin, "")
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return dbURL
}

func adminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

func connect(t testing.TB, ctx context.Context, admin string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to %s (is PostgreSQL running? set TEST_DATABASE_URL): %v", admin, err)
	}
	return conn
}

// create makes a database named closer_test_<unix seconds>_<random>, a
// copy of template (the server's default, template1, when template is
// empty), registers its drop at the end of the test and returns its URL.
//
// The drop runs in the background: DROP DATABASE waits for a checkpoint
// (PostgreSQL 15 forces one to forget the database's files), a second or
// more while other tests write, and a test that waited for it held its
// parallel slot all that time. A drop the test binary exits before is left
// to the next binary's sweep (dropStaleTests), which the creation time in
// the name makes possible.
func create(t testing.TB, ctx context.Context, conn *pgx.Conn, admin, template string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	name := testName(time.Now())
	stmt := "CREATE DATABASE " + name
	if template != "" {
		stmt += " TEMPLATE " + template
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return "", err
	}
	t.Cleanup(func() { go dropInBackground(admin, name) })
	u.Path = "/" + name
	return u.String(), nil
}

// testName names a test database: closer_test_, its creation time in Unix
// seconds (what dropStaleTests reads) and a random suffix.
func testName(created time.Time) string {
	return fmt.Sprintf("%s%d_%s", testPrefix, created.Unix(), randomHex())
}

// dropSlots bounds the background drops in flight (each holds a server
// connection while it waits for its checkpoint; drops waiting together
// share one).
var dropSlots = make(chan struct{}, 8)

// dropInBackground drops a test database after its test has ended, ending
// any session the test left open. It cannot fail the test (that has ended);
// what it leaves behind, dropStaleTests drops later.
func dropInBackground(admin, name string) {
	dropSlots <- struct{}{}
	defer func() { <-dropSlots }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: drop %s: %v (left for a later sweep)\n", name, err)
		return
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: drop %s: %v (left for a later sweep)\n", name, err)
	}
}

// sweepStaleTests runs dropStaleTests on a connection of its own.
func sweepStaleTests(admin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		return // best effort; the next binary sweeps
	}
	defer c.Close(ctx)
	dropStaleTests(ctx, c, testPrefix, func(string, ...any) {})
}

// dropStaleTests drops, best effort, the test databases (named prefix<unix
// seconds>_...) created more than staleTest ago: those whose background
// drop the test binary exited before. Without FORCE, so a database still
// in use is left alone.
func dropStaleTests(ctx context.Context, conn *pgx.Conn, prefix string, logf func(format string, args ...any)) {
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, prefix)
	if err != nil {
		logf("pgtest: list stale test databases: %v", err)
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		logf("pgtest: list stale test databases: %v", err)
		return
	}
	for _, name := range names {
		stamp, _, ok := strings.Cut(strings.TrimPrefix(name, prefix), "_")
		secs, err := strconv.ParseInt(stamp, 10, 64)
		if !ok || err != nil || time.Since(time.Unix(secs, 0)) <= staleTest {
			continue // not ours, or recent
		}
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			logf("pgtest: drop stale %s: %v", name, err)
			continue
		}
		logf("pgtest: dropped stale test database %s", name)
	}
}

func randomHex() string {
	var buf [8]byte
	if _, err := rand.Read(buf[:]); err != nil {
		panic(err) // crypto/rand.Read does not fail on supported platforms
	}
	return hex.EncodeToString(buf[:])
}

// templates caches, per admin URL, the name of the template known to exist,
// so a test binary looks it up (and at most builds it) once.
var templates = templateCache{names: map[string]string{}}

type templateCache struct {
	mu    sync.Mutex
	names map[string]string
}

func (c *templateCache) get(ctx context.Context, t testing.TB, admin string, conn *pgx.Conn) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name, ok := c.names[admin]; ok {
		return name, nil
	}
	name, err := templateName(ctx, conn)
	if err != nil {
		return "", err
	}
	if _, err := ensureTemplate(ctx, t, conn, admin, name); err != nil {
		return "", err
	}
	c.names[admin] = name
	// Once per binary and server, beside the tests: its drops wait for
	// checkpoints, and what it finds is no test's business.
	go sweepStaleTests(admin)
	return name, nil
}

func (c *templateCache) forget(admin string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.names, admin)
}

// templateName is closer_tpl_ and the first 16 hex digits of the hash of
// the migrations the template holds and of the role conn is logged in as
// (the template's tables belong to the role that built it, so roles sharing
// a server each get their own).
func templateName(ctx context.Context, conn *pgx.Conn) (string, error) {
	var role string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&role); err != nil {
		return "", err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return "", fmt.Errorf("river migrations: %w", err)
	}
	return templateNameOf(role, migrations.FS, migrator.AllVersions())
}

// templateNameOf hashes templateRecipe, the role, every file of ours (path
// and content, in WalkDir's lexical order) and every River migration
// (version, name and SQL), each field length-prefixed so that no two
// different sets give the same byte stream.
func templateNameOf(role string, ours fs.FS, river []rivermigrate.Migration) (string, error) {
	h := sha256.New()
	field := func(s string) {
		fmt.Fprintf(h, "%d:", len(s))
		io.WriteString(h, s)
	}
	field("recipe " + templateRecipe)
	field("role " + role)
	err := fs.WalkDir(ours, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(ours, path)
		if err != nil {
			return err
		}
		field("closer " + path)
		field(string(b))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("migrations: %w", err)
	}
	for _, m := range river {
		field(fmt.Sprintf("river %d %s", m.Version, m.Name))
		field(m.SQLUp)
		field(m.SQLDown)
	}
	return templatePrefix + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate makes sure the database name exists, building it if not:
// migrate a private database, close it to connections, mark it a template
// and rename it to name. If another binary renamed its build first, ours is
// dropped and theirs used.
//
// It reports whether this call's build became the template.
func ensureTemplate(ctx context.Context, t testing.TB, conn *pgx.Conn, admin, name string) (built bool, err error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		return false, nil
	}
	start := time.Now()
	dropStale(ctx, t, conn, templatePrefix, buildPrefix, name)

	var now time.Time
	if err := conn.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return false, err
	}
	build := buildName(name)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return false, fmt.Errorf("create %s: %w", build, err)
	}
	done := false
	defer func() {
		if !done {
			dropDatabase(context.WithoutCancel(ctx), t, conn, build, true)
		}
	}()
	comment := commentPrefix + now.UTC().Format(time.RFC3339)
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+build+" IS '"+comment+"'"); err != nil {
		return false, fmt.Errorf("comment on %s: %w", build, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return false, fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	u.Path = "/" + build
	if err := dbmigrate.Up(ctx, u.String()); err != nil {
		return false, fmt.Errorf("migrate %s: %w", build, err)
	}
	// dbmigrate.Up has closed its connections; ALTER and RENAME wait (up
	// to 5 s) for their backends to exit.
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+build+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return false, fmt.Errorf("mark %s a template: %w", build, err)
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+build+" RENAME TO "+name)
	var pgErr *pgconn.PgError
	// duplicate_database, or, when two renames race past that check, the
	// unique index on pg_database's names.
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		t.Logf("pgtest: another test binary built template %s first; using it", name)
		return false, nil // the deferred drop removes our build
	}
	if err != nil {
		return false, fmt.Errorf("rename %s to %s: %w", build, name, err)
	}
	done = true
	t.Logf("pgtest: built template database %s in %v", name, time.Since(start).Round(time.Millisecond))
	return true, nil
}

// buildName names a database in which template is built: closer_tplbuild_,
// the template's hash and a random suffix.
func buildName(template string) string {
	return buildPrefix + strings.TrimPrefix(template, templatePrefix) + "_" + randomHex()
}

// dropStale drops, best effort, templates (named tplPrefix...) other than
// keep built more than staleTemplate ago and builds (named bldPrefix...)
// started more than staleBuild ago. Only databases carrying our comment are
// touched.
func dropStale(ctx context.Context, t testing.TB, conn *pgx.Conn, tplPrefix, bldPrefix, keep string) {
	rows, err := conn.Query(ctx, `
		SELECT datname, coalesce(shobj_description(oid, 'pg_database'), ''), now()
		FROM pg_database
		WHERE (starts_with(datname, $1) OR starts_with(datname, $2)) AND datname <> $3`,
		tplPrefix, bldPrefix, keep)
	if err != nil {
		t.Logf("pgtest: list stale templates: %v", err)
		return
	}
	type db struct {
		name  string
		built time.Time
		now   time.Time
	}
	var dbs []db
	for rows.Next() {
		var name, comment string
		var now time.Time
		if err := rows.Scan(&name, &comment, &now); err != nil {
			t.Logf("pgtest: list stale templates: %v", err)
			rows.Close()
			return
		}
		built, err := time.Parse(time.RFC3339, strings.TrimPrefix(comment, commentPrefix))
		if !strings.HasPrefix(comment, commentPrefix) || err != nil {
			continue // not ours, or a build whose comment is not set yet
		}
		dbs = append(dbs, db{name, built, now})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Logf("pgtest: list stale templates: %v", err)
		return
	}
	for _, d := range dbs {
		age := d.now.Sub(d.built)
		switch {
		case strings.HasPrefix(d.name, bldPrefix) && age > staleBuild:
			// A build this old belongs to a test binary that died; FORCE
			// ends any session it left behind.
			dropDatabase(ctx, t, conn, d.name, true)
		case strings.HasPrefix(d.name, tplPrefix) && age > staleTemplate:
			dropDatabase(ctx, t, conn, d.name, false)
		}
	}
}

// dropDatabase drops name, best effort, logging what fails. A template must
// first be unmarked; without force, a drop that fails marks it again.
func dropDatabase(ctx context.Context, t testing.TB, conn *pgx.Conn, name string, force bool) {
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE false"); err != nil {
		t.Logf("pgtest: drop %s: %v", name, err)
		return
	}
	stmt := "DROP DATABASE IF EXISTS " + name
	if force {
		stmt += " WITH (FORCE)"
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Logf("pgtest: drop %s: %v", name, err)
		if !force {
			if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true"); err != nil {
				t.Logf("pgtest: mark %s a template again: %v", name, err)
			}
		}
		return
	}
	t.Logf("pgtest: dropped database %s", name)
}
