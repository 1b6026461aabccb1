package pgtest

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/migrations"
)

// latestMigration is the highest NNNNNN prefix among the embedded
// migration files: the version a fully migrated database reports.
func latestMigration(t *testing.T) uint {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migration files: %v %v", names, err)
	}
	var latest uint
	for _, n := range names {
		v, err := strconv.ParseUint(strings.SplitN(n, "_", 2)[0], 10, 32)
		if err != nil {
			t.Fatalf("migration file %s: %v", n, err)
		}
		latest = max(latest, uint(v))
	}
	return latest
}

func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, ctx, adminURL())
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func databaseExists(t *testing.T, conn *pgx.Conn, name string) bool {
	t.Helper()
	var ok bool
	if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func publicTables(t *testing.T, dbURL string) []string {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, ctx, dbURL)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A database from NewDB has every migration applied, ours and River's, as
// dbmigrate.Up leaves it; and it is a database of its own, not the template.
func TestNewDBIsMigrated(t *testing.T) {
	t.Parallel()
	pool, dbURL := NewDB(t)
	ctx := context.Background()
	v, dirty, err := dbmigrate.Version(ctx, dbURL)
	if err != nil || dirty || v != latestMigration(t) {
		t.Fatalf("version %d dirty %v err %v; want %d, clean", v, dirty, err, latestMigration(t))
	}
	tables := publicTables(t, dbURL)
	for _, want := range []string{"studies", "answers", "river_job", "river_migration"} {
		if !slices.Contains(tables, want) {
			t.Errorf("table %s missing; tables: %v", want, tables)
		}
	}
	var name string
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "closer_test_") {
		t.Errorf("connected to %s, want a closer_test_ database", name)
	}
	// Up on the copy has nothing left to do.
	if err := dbmigrate.Up(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
}

// What one test writes, neither another test's database nor the template
// (so no later copy) sees.
func TestNewDBsAreIndependent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := NewDB(t)
	b, _ := NewDB(t)
	if _, err := a.Exec(ctx, "INSERT INTO admins (email, password_hash) VALUES ('a@example.com', 'x')"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "CREATE TABLE probe (x int)"); err != nil {
		t.Fatal(err)
	}
	c, cURL := NewDB(t)
	for name, pool := range map[string]interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}{"b": b, "c (made after a's writes)": c} {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM admins").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d admins (%v), want 0", name, n, err)
		}
	}
	if slices.Contains(publicTables(t, cURL), "probe") {
		t.Error("a table created in one test database shows up in a later copy of the template")
	}
}

// EmptyDB has no tables and no migration version: the migration tests
// start from it.
func TestEmptyDBIsEmpty(t *testing.T) {
	t.Parallel()
	dbURL := EmptyDB(t)
	if tables := publicTables(t, dbURL); len(tables) != 0 {
		t.Fatalf("tables %v, want none", tables)
	}
	if v, _, err := dbmigrate.Version(context.Background(), dbURL); err != nil || v != 0 {
		t.Fatalf("version %d (%v), want 0", v, err)
	}
}

// The template nobody can connect to and that is marked a template, under
// the name its content hashes to.
func TestTemplateIsClosed(t *testing.T) {
	t.Parallel()
	NewDB(t) // builds the template if need be
	conn := adminConn(t)
	name, err := templateName(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	var isTemplate, allowConn bool
	var comment string
	err = conn.QueryRow(context.Background(),
		"SELECT datistemplate, datallowconn, coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = $1",
		name).Scan(&isTemplate, &allowConn, &comment)
	if err != nil {
		t.Fatalf("template %s: %v", name, err)
	}
	if !isTemplate || allowConn {
		t.Errorf("template %s: datistemplate %v datallowconn %v; want true, false", name, isTemplate, allowConn)
	}
	if _, err := time.Parse(time.RFC3339, strings.TrimPrefix(comment, commentPrefix)); !strings.HasPrefix(comment, commentPrefix) || err != nil {
		t.Errorf("template %s: comment %q, want %q and a time", name, comment, commentPrefix)
	}
}

// The name changes with any change to what the template would hold, and
// only then.
func TestTemplateNameFollowsMigrations(t *testing.T) {
	t.Parallel()
	ours := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (x int);")},
		"000001_init.down.sql": {Data: []byte("DROP TABLE a;")},
	}
	river := []rivermigrate.Migration{{Version: 1, Name: "create river migration", SQLUp: "CREATE TABLE r ();", SQLDown: "DROP TABLE r;"}}
	base, err := templateNameOf("postgres", ours, river)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, templatePrefix) || len(base) != len(templatePrefix)+16 {
		t.Fatalf("name %q: want %s and 16 hex digits", base, templatePrefix)
	}
	if again, _ := templateNameOf("postgres", cloneFS(ours), slices.Clone(river)); again != base {
		t.Errorf("same migrations: %s then %s", base, again)
	}
	edited := cloneFS(ours)
	edited["000001_init.up.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE a (x bigint);")}
	added := cloneFS(ours)
	added["000002_more.up.sql"] = &fstest.MapFile{Data: []byte("")}
	renamed := fstest.MapFS{
		"000001_start.up.sql":  ours["000001_init.up.sql"],
		"000001_init.down.sql": ours["000001_init.down.sql"],
	}
	// The same bytes split differently between two files.
	shifted := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (x int);DROP")},
		"000001_init.down.sql": {Data: []byte(" TABLE a;")},
	}
	riverEdited := slices.Clone(river)
	riverEdited[0].SQLUp = "CREATE TABLE r (id int);"
	riverAdded := append(slices.Clone(river), rivermigrate.Migration{Version: 2, Name: "x", SQLUp: "SELECT 1;"})
	for _, c := range []struct {
		name  string
		role  string
		ours  fs.FS
		river []rivermigrate.Migration
	}{
		{"a migration edited", "postgres", edited, river},
		{"a migration added", "postgres", added, river},
		{"a migration renamed", "postgres", renamed, river},
		{"bytes moved between files", "postgres", shifted, river},
		{"a River migration edited", "postgres", ours, riverEdited},
		{"a River migration added", "postgres", ours, riverAdded},
		{"another role", "closer", ours, river},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := templateNameOf(c.role, c.ours, c.river)
			if err != nil {
				t.Fatal(err)
			}
			if got == base {
				t.Errorf("name unchanged: %s", got)
			}
		})
	}
}

func cloneFS(m fstest.MapFS) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Several binaries building the same template at once: every one ends up
// with it, exactly one build becomes it, and the losers' builds are gone.
func TestConcurrentBuilds(t *testing.T) {
	t.Parallel()
	// A name of this test's own, so the shared template is not touched.
	name := templatePrefix + "t" + randomHex()[:15]
	conn := adminConn(t)
	t.Cleanup(func() { dropDatabase(context.Background(), t, conn, name, false) })
	const builders = 3
	var wg sync.WaitGroup
	built := make([]bool, builders)
	errs := make([]error, builders)
	for i := range builders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			c, err := pgx.Connect(ctx, adminURL())
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close(ctx)
			built[i], errs[i] = ensureTemplate(ctx, t, c, adminURL(), name)
		}()
	}
	wg.Wait()
	winners := 0
	for i := range builders {
		if errs[i] != nil {
			t.Errorf("builder %d: %v", i, errs[i])
		}
		if built[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d builds became the template, want 1", winners)
	}
	if !databaseExists(t, conn, name) {
		t.Fatalf("template %s missing", name)
	}
	var left []string
	rows, err := conn.Query(context.Background(), "SELECT datname::text FROM pg_database WHERE starts_with(datname, $1)",
		buildPrefix+strings.TrimPrefix(name, templatePrefix))
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("builds left behind: %v", left)
	}
	// A copy of the template built here is migrated.
	dbURL, err := create(t, context.Background(), conn, adminURL(), name)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := dbmigrate.Version(context.Background(), dbURL); err != nil || v != latestMigration(t) {
		t.Errorf("copy of %s: version %d (%v), want %d", name, v, err, latestMigration(t))
	}
}

// Old templates of other migration sets and old abandoned builds are
// dropped; recent ones, the one being kept and databases without our
// comment are not.
func TestDropStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := adminConn(t)
	var now time.Time
	if err := conn.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	// Prefixes of this test's own, so that no other cleaner (another test
	// or binary building a template now) drops what this test expects kept.
	suffix := randomHex()[:12]
	tplPrefix, bldPrefix := "closer_tsttpl_"+suffix+"_", "closer_tstbuild_"+suffix+"_"
	mk := func(name string, built time.Time, comment bool) string {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, q := range []string{"ALTER DATABASE " + name + " WITH IS_TEMPLATE false", "DROP DATABASE IF EXISTS " + name} {
				if _, err := conn.Exec(context.Background(), q); err != nil {
					t.Log(err)
				}
			}
		})
		if comment {
			if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+name+" IS '"+commentPrefix+built.UTC().Format(time.RFC3339)+"'"); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasPrefix(name, tplPrefix) {
			if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
				t.Fatal(err)
			}
		}
		return name
	}
	old := now.Add(-staleTemplate - time.Hour)
	oldTemplate := mk(tplPrefix+"old", old, true)
	keptOld := mk(tplPrefix+"keep", old, true)
	newTemplate := mk(tplPrefix+"new", now.Add(-staleTemplate+time.Hour), true)
	noComment := mk(tplPrefix+"bare", old, false)
	oldBuild := mk(bldPrefix+"old", now.Add(-staleBuild-time.Minute), true)
	newBuild := mk(bldPrefix+"new", now.Add(-staleBuild+time.Minute), true)
	other := mk("closer_tstother_"+suffix, old, true)

	dropStale(ctx, t, conn, tplPrefix, bldPrefix, keptOld)

	for name, want := range map[string]bool{
		oldTemplate: false, oldBuild: false,
		keptOld: true, newTemplate: true, noComment: true, newBuild: true, other: true,
	} {
		if got := databaseExists(t, conn, name); got != want {
			t.Errorf("%s: exists %v, want %v", name, got, want)
		}
	}
}

// A template that vanished between lookup and copy (dropped as stale by
// another binary) is looked up again, and NewDB still succeeds. Not
// parallel: it plants a name in the package's cache.
func TestNewDBTemplateVanished(t *testing.T) {
	t.Parallel()
	admin := adminURL()
	templates.mu.Lock()
	saved, had := templates.names[admin]
	templates.names[admin] = templatePrefix + "gone" + randomHex()[:12]
	templates.mu.Unlock()
	t.Cleanup(func() {
		templates.mu.Lock()
		defer templates.mu.Unlock()
		if had {
			templates.names[admin] = saved
		}
	})
	_, dbURL := NewDB(t)
	if v, _, err := dbmigrate.Version(context.Background(), dbURL); err != nil || v != latestMigration(t) {
		t.Fatalf("version %d (%v), want %d", v, err, latestMigration(t))
	}
	want, err := templateName(context.Background(), adminConn(t))
	if err != nil {
		t.Fatal(err)
	}
	templates.mu.Lock()
	got := templates.names[admin]
	templates.mu.Unlock()
	if got != want {
		t.Errorf("cache holds %s after the retry, want %s", got, want)
	}
}

// A test's database is dropped after the test ends (in the background),
// sessions the test left open included.
func TestNewDBDroppedAfterTest(t *testing.T) {
	t.Parallel()
	conn := adminConn(t)
	var name string
	t.Run("uses a database", func(t *testing.T) { //nolint:paralleltest // the parent checks after it ends
		pool, dbURL := NewDB(t)
		if err := pool.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		connect(t, context.Background(), dbURL) // a session the test never closes
	})
	if name == "" || !strings.HasPrefix(name, testPrefix) {
		t.Fatalf("database %q, want a %s name", name, testPrefix)
	}
	for deadline := time.Now().Add(time.Minute); databaseExists(t, conn, name); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists a minute after its test ended", name)
		}
	}
}

// The sweep drops test databases older than staleTest that nobody uses,
// and leaves recent ones, used ones and names that carry no time.
func TestDropStaleTests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := adminConn(t)
	// A prefix of this test's own, so that no other binary's sweep drops
	// what this test expects kept.
	prefix := "closer_tsttest_" + randomHex()[:12] + "_"
	mk := func(name string) string {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Log(err)
			}
		})
		return name
	}
	stamp := func(age time.Duration) string { return fmt.Sprint(time.Now().Add(-age).Unix()) }
	old := mk(prefix + stamp(staleTest+time.Minute) + "_a")
	oldInUse := mk(prefix + stamp(staleTest+time.Minute) + "_b")
	recent := mk(prefix + stamp(staleTest-time.Minute) + "_c")
	noTime := mk(prefix + "x_d")
	u, err := url.Parse(adminURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + oldInUse
	user := connect(t, ctx, u.String())
	defer user.Close(ctx)

	dropStaleTests(ctx, conn, prefix, t.Logf)

	for name, want := range map[string]bool{old: false, oldInUse: true, recent: true, noTime: true} {
		if got := databaseExists(t, conn, name); got != want {
			t.Errorf("%s: exists %v, want %v", name, got, want)
		}
	}
}
