// Command web is closer's server: the annotator pages, the admin pages and
// the JSON API on PostgreSQL.
//
//	web                 apply migrations, bootstrap the admin, create the
//	                    demo study on first start, and serve
//	web migrate up      apply all migrations
//	web migrate down    revert all migrations (deletes every table)
//
// Configuration comes from the environment: DATABASE_URL (required), ADDR
// (default :8080), BASE_URL, ADMIN_EMAIL and ADMIN_PASSWORD (create the
// first admin if none exists), ADMIN_API_TOKEN (an API token for scripts),
// LOG_FORMAT (text or json), LOG_LEVEL (debug, info, warn, error), ROLE
// (web, worker or all: whether this replica serves HTTP, runs the
// background jobs (recomputes, purges of deleted studies), or both; default
// all), RECOMPUTE_WORKERS (recomputes run at once by a worker replica,
// default 1), TLS_CERT_FILE and TLS_KEY_FILE (serve
// HTTPS with this PEM pair, with HSTS; SIGHUP reloads the pair),
// and DB_MAX_REQUESTS, DB_QUEUE_WAIT and
// DB_ACQUIRE_TIMEOUT (load shedding: requests using the database at once,
// default four times the pool; how long one waits for its turn, default
// 1s, and then for a connection, default 2s, before a 503),
// BODY_READ_TIMEOUT (the time a request body other than an upload's has to
// arrive, default 10s), TRANSFER_WINDOW and TRANSFER_MIN_BYTES (uploads
// must arrive and responses be read at TRANSFER_MIN_BYTES per
// TRANSFER_WINDOW at least, default 64 KiB per 30s, or the connection is
// cut).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dbmigrate"
	"github.com/closer-lab/closer/internal/mailer"
	"github.com/closer-lab/closer/internal/purge"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "web: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := cfg.logger(stderr)
	switch {
	case len(args) == 0:
		return serve(ctx, cfg, log, stdout)
	case len(args) == 2 && args[0] == "migrate" && args[1] == "up":
		if err := dbmigrate.Up(ctx, cfg.DatabaseURL); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return nil
	case len(args) == 2 && args[0] == "migrate" && args[1] == "down":
		if err := dbmigrate.Down(ctx, cfg.DatabaseURL); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations reverted")
		return nil
	default:
		return errors.New("usage: web [migrate up|down]")
	}
}

// maxHeaderBytes bounds a request's header block.
const maxHeaderBytes = 64 << 10

// defaultMaxConns is the pool size unless DATABASE_URL sets pool_max_conns.
const defaultMaxConns = 16

func serve(ctx context.Context, cfg config, log *slog.Logger, stdout io.Writer) error {
	if err := dbmigrate.Up(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	pcfg, err := poolConfig(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	maxDBRequests := cfg.DBMaxRequests
	if maxDBRequests == 0 {
		// A few requests per connection keep the pool busy while the
		// next ones wait; beyond that, waiting only adds latency.
		maxDBRequests = 4 * int(pcfg.MaxConns)
	}
	if cfg.DebugAddr != "" {
		addr, err := startDebug(ctx, cfg.DebugAddr, log)
		if err != nil {
			return fmt.Errorf("DEBUG_ADDR: %w", err)
		}
		log.Info("profiler listening", "addr", addr)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer pool.Close()
	collector := collect.New(pool)
	accounts := account.New(pool)
	for _, ds := range collect.RegisterDesigns(collector) { // landmark-k1, landmark-k2, basis
		ds.OnError = func(studyID int64, err error) {
			log.Error("recording answers in the design", "study", studyID, "err", err)
		}
	}
	if err := bootstrap(ctx, cfg, accounts, log); err != nil {
		return err
	}
	demoCreated, err := ensureDemo(ctx, collector)
	if err != nil {
		return err
	}
	if demoCreated {
		log.Info("created the demo study", "slug", demoSlug)
	}

	// Background jobs (River): every role enqueues and cancels recomputes
	// and enqueues the purges of deleted studies; worker and all replicas
	// also run them, on one client (one leader runs the periodic scans).
	jobs, err := recompute.New(pool, collector, recompute.Config{Work: cfg.runsWorker(), Workers: cfg.RecomputeWorkers,
		Register: []func(*river.Workers, *river.Config){purge.Register(collector.Store, purge.Config{}, log)}}, log)
	if err != nil {
		return err
	}
	// Not ctx: cancelling Start's context is River's hard stop; Stop below
	// lets a running recompute finish first (for up to 20 s).
	if err := jobs.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start recompute workers: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := jobs.Stop(sctx); err != nil {
			log.Warn("stopping recompute workers", "err", err)
		}
	}()
	if !cfg.runsWeb() {
		fmt.Fprintf(stdout, "closer recompute worker is running (ROLE=%s)\n", cfg.Role)
		<-ctx.Done()
		log.Info("shutting down")
		return nil
	}

	// Answers a design has not recorded (a replica stopped between an
	// answer's commit and its recording, or its writer failed) are recorded
	// now and then checked for every little while, by the store's own
	// goroutines with its designs' writers. Not ctx: the writers go on
	// serving the answers of the requests the server finishes below; Close
	// (deferred after the server's shutdown, before the pool's) stops them.
	collector.OnPendingError = func(err error) { log.Warn("recording pending design answers", "err", err) }
	if err := collector.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := collector.Close(cctx); err != nil {
			log.Warn("stopping the designs' writers", "err", err)
		}
	}()

	hcfg := web.Config{BaseURL: cfg.BaseURL, Jobs: jobs, Purges: purge.NewEnqueuer(jobs), TrustedProxies: cfg.TrustedProxies,
		MaxDBRequests: maxDBRequests, QueueWait: cfg.DBQueueWait, AcquireTimeout: cfg.DBAcquireTimeout, RequestLog: cfg.RequestLog,
		BodyReadTimeout: cfg.BodyReadTimeout, TransferWindow: cfg.TransferWindow, TransferMinBytes: cfg.TransferMinBytes,
		JoinRate: cfg.JoinRate, JoinBurst: cfg.JoinBurst,
		ItemLimits:      store.ItemLimits{MaxUploadBytes: cfg.UploadMaxStoredBytes, MaxStudyBytes: cfg.StudyMaxImageBytes},
		ImageCacheBytes: cfg.ImageCacheBytes, OIDC: cfg.OIDC, NoPasswordLogin: cfg.NoPasswordLogin}
	if cfg.SMTP != nil {
		if hcfg.Mailer, err = mailer.New(*cfg.SMTP); err != nil {
			return err
		}
		log.Info("invitations are e-mailed", "smtp", hcfg.Mailer.Server(), "tls", cfg.SMTP.TLS)
	}
	if hcfg.ImageCacheBytes == 0 {
		hcfg.ImageCacheBytes = -1 // IMAGE_CACHE_BYTES=0: no cache (web.Config's 0 is its default)
	}
	var certs *certReloader
	if cfg.servesTLS() {
		certs, err = newCertReloader(cfg.TLSCertFile, cfg.TLSKeyFile, log)
		if err != nil {
			return err
		}
		// SIGHUP reloads the pair (after a renewal); without TLS it keeps
		// its default meaning.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go certs.reloadOn(ctx, hup)
		hcfg.HSTSMaxAge = hstsMaxAge
	}
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           web.New(collector, accounts, hcfg, log),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Headers are small (a session cookie, a bearer token); net/http's
		// default of 1 MB per connection is memory a stranger can claim.
		MaxHeaderBytes: maxHeaderBytes,
		// net/http's own complaints (TLS handshakes from scanners, broken
		// connections) go through slog like everything else, as warnings.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// No ReadTimeout or WriteTimeout: the router sets each request's
		// read and write deadlines itself (internal/web/limits.go), moving
		// them on as a transfer progresses, so a long export reaches a
		// client that reads it and a stalled client is cut off.
	}
	ln, err := web.Listen(ctx, cfg.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	if certs != nil {
		srv.TLSConfig = certs.tlsConfig()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	fmt.Fprintf(stdout, "closer is serving on %s\n", cfg.BaseURL)
	if _, err := collector.StudyBySlug(ctx, demoSlug); err == nil {
		fmt.Fprintf(stdout, "  demo study:  %s/s/%s\n", cfg.BaseURL, demoSlug)
	}
	if _, err := collector.StudyBySlug(ctx, demoWordsSlug); err == nil {
		fmt.Fprintf(stdout, "  text demo:   %s/s/%s\n", cfg.BaseURL, demoWordsSlug)
	}
	fmt.Fprintf(stdout, "  admin login: %s/admin/login\n", cfg.BaseURL)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// bootstrap creates the first admin and the bootstrap API token.
func bootstrap(ctx context.Context, cfg config, accounts *account.Store, log *slog.Logger) error {
	if cfg.AdminEmail != "" {
		created, err := accounts.BootstrapAdmin(ctx, cfg.AdminEmail, cfg.AdminPassword)
		if err != nil {
			return err
		}
		if created {
			log.Info("created the first admin", "email", cfg.AdminEmail)
		}
	}
	admin, err := accounts.FirstAdmin(ctx)
	if collect.KindOf(err) == study.KindNotFound {
		log.Warn("no admin exists: set ADMIN_EMAIL and ADMIN_PASSWORD to create one")
		if cfg.AdminAPIToken != "" {
			return errors.New("ADMIN_API_TOKEN needs an admin: set ADMIN_EMAIL and ADMIN_PASSWORD too")
		}
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.AdminAPIToken != "" {
		if err := accounts.EnsureAPIToken(ctx, admin.ID, cfg.AdminAPIToken, "ADMIN_API_TOKEN"); err != nil {
			return err
		}
	}
	return nil
}

// poolConfig is the app's pool for databaseURL: pool_max_conns in the URL
// sizes it (the migrations drop that parameter before they connect),
// defaultMaxConns otherwise.
func poolConfig(databaseURL string) (*pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		// pgx's default (the number of CPUs, at least 4) is small for a
		// server whose exports hold a connection while they stream.
		pcfg.MaxConns = defaultMaxConns
	}
	collect.ConfigurePool(pcfg) // requests wait for a connection only DB_ACQUIRE_TIMEOUT
	return pcfg, nil
}
