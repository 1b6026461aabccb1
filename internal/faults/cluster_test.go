package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// cluster is a private PostgreSQL cluster under a temporary directory,
// listening on 127.0.0.1 on a free port and on a socket in its data
// directory, as scripts/dev-postgres.sh makes one. Run as root, it belongs
// to the postgres user (PostgreSQL refuses to run as root).
type cluster struct {
	t      *testing.T
	bindir string
	data   string
	port   int
	owner  *user.User // nil: the current user
}

// pgBindir finds the installed server binaries (initdb, pg_ctl).
func pgBindir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { // newest version first
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	dirs = append(dirs, "/usr/local/pgsql/bin")
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, pg_ctl) found; install them (Debian: apt-get install postgresql)")
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&0o111 != 0
}

// startCluster creates the cluster in root/pg, starts it and creates the
// database closer. It is stopped when the test ends.
func startCluster(t *testing.T, root string) *cluster {
	t.Helper()
	bindir, err := pgBindir()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bindir: bindir, data: filepath.Join(root, "pg"), port: freePort(t)}
	if err := os.Mkdir(c.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if c.owner, err = user.Lookup("postgres"); err != nil {
			t.Fatalf("running as root, but there is no postgres user to own the cluster: %v", err)
		}
		uid, _ := strconv.Atoi(c.owner.Uid)
		gid, _ := strconv.Atoi(c.owner.Gid)
		for _, d := range []string{root, c.data} {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.run("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8")
	c.pgctl("start")
	t.Cleanup(func() {
		// Immediate: nothing in it is worth a checkpoint.
		if out, err := c.cmd("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Logf("stopping the private cluster: %v\n%s", err, out)
		}
	})
	conn := c.connect(context.Background(), "postgres")
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE closer"); err != nil {
		t.Fatal(err)
	}
	return c
}

// cmd is a command of the cluster's binaries, run as the cluster's owner.
func (c *cluster) cmd(name string, args ...string) *exec.Cmd {
	bin := filepath.Join(c.bindir, name)
	if c.owner == nil {
		return exec.Command(bin, args...)
	}
	return exec.Command("runuser", append([]string{"-u", c.owner.Username, "--", bin}, args...)...)
}

func (c *cluster) run(name string, args ...string) {
	c.t.Helper()
	if out, err := c.cmd(name, args...).CombinedOutput(); err != nil {
		c.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// pgctl starts or restarts the server (waiting until it accepts
// connections); restart stops it with -m fast, as a maintenance restart does.
func (c *cluster) pgctl(action string) {
	c.t.Helper()
	args := []string{"-D", c.data, "-l", filepath.Join(c.data, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", c.port, c.data)}
	if action == "restart" {
		args = append(args, "-m", "fast")
	}
	c.run("pg_ctl", append(args, action)...)
}

// url is the connection URL of a database of the cluster.
func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func (c *cluster) connect(ctx context.Context, db string) *pgx.Conn {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url(db))
	if err != nil {
		c.t.Fatalf("connect to the private cluster: %v", err)
	}
	return conn
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
