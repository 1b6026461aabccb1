package web_test

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// logBuffer collects the app's log lines for a test to inspect.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything logged so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the lines logged at level ("ERROR", "WARN", ...).
func (l *logBuffer) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, "level="+level+" ") {
			out = append(out, line)
		}
	}
	return out
}

// newAppOn is newApp on a given pool and configuration, with its log kept.
// BaseURL is set to the test server's.
func newAppOn(t *testing.T, pool *pgxpool.Pool, cfg web.Config) (*app, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(logs, nil)))
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}, logs
}
