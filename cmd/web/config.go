package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/mailer"
	"github.com/closer-lab/closer/internal/web"
)

// config is the server's configuration, read once from the environment.
type config struct {
	DatabaseURL   string
	Addr          string
	BaseURL       string
	AdminEmail    string
	AdminPassword string
	AdminAPIToken string
	LogFormat     string // text or json
	LogLevel      slog.Level
	// RequestLog logs a line per HTTP request (REQUEST_LOG=true); off by
	// default, so a busy server's log holds what needs attention.
	RequestLog bool
	// Role is what this replica runs: web (the HTTP server, enqueueing
	// recompute jobs), worker (the recompute jobs and their periodic scan)
	// or all (both; the default).
	Role string
	// RecomputeWorkers is how many recomputes a worker runs at once.
	RecomputeWorkers int
	// TLSCertFile and TLSKeyFile, when set, make the server speak HTTPS
	// itself (PEM files; reloaded on SIGHUP).
	TLSCertFile string
	TLSKeyFile  string
	// OIDC is single sign-on (OIDC_*; nil: none), NoPasswordLogin
	// PASSWORD_LOGIN=off (config_oidc.go).
	OIDC            *web.OIDCConfig
	NoPasswordLogin bool
	// SMTP is the server invitations are e-mailed through (SMTP_*; nil:
	// none, the links are shown to pass on; config_smtp.go).
	SMTP *mailer.Config
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed for the client's address (login throttling, sessions).
	TrustedProxies []netip.Prefix
	// DBMaxRequests bounds the HTTP requests using the database at once (0:
	// four times the pool's size), DBQueueWait how long a request waits
	// for its turn, DBAcquireTimeout how long it then waits for a pool
	// connection; past either wait it gets 503 with Retry-After.
	DBMaxRequests    int
	DBQueueWait      time.Duration
	DBAcquireTimeout time.Duration
	// BodyReadTimeout bounds the time a request body other than an
	// upload's takes to arrive (BODY_READ_TIMEOUT); TransferWindow and
	// TransferMinBytes the pace of uploads and responses: at least
	// TransferMinBytes every TransferWindow (TRANSFER_WINDOW,
	// TRANSFER_MIN_BYTES), or the connection is cut.
	BodyReadTimeout  time.Duration
	TransferWindow   time.Duration
	TransferMinBytes int
	// JoinRate and JoinBurst limit the participants one client address
	// creates or resumes (JOIN_RATE a second, JOIN_BURST at once; JOIN_RATE
	// 0: no limit).
	JoinRate  float64
	JoinBurst int
	// DebugAddr, when set, serves Go's profiler (net/http/pprof) on its
	// own listener, never on the public one: a loopback address such as
	// 127.0.0.1:6060 for profiling a running server.
	DebugAddr string
	// UploadMaxStoredBytes bounds the image bytes one upload stores,
	// StudyMaxImageBytes those a study holds, ImageCacheBytes the verified
	// images kept in memory to serve /img (0: none).
	UploadMaxStoredBytes int64
	StudyMaxImageBytes   int64
	ImageCacheBytes      int64
}

// Defaults of the item byte bounds and the image cache.
const (
	defaultUploadMaxStoredBytes = 256 << 20
	defaultStudyMaxImageBytes   = 4 << 30
	defaultImageCacheBytes      = 64 << 20
)

// Defaults of the load-shedding settings.
const (
	defaultDBQueueWait      = time.Second
	defaultDBAcquireTimeout = 2 * time.Second
	defaultBodyReadTimeout  = 10 * time.Second
	defaultTransferWindow   = 30 * time.Second
	defaultTransferMinBytes = 64 << 10
	// A lab or a school behind one address starts a class at once; one
	// client made 464 participants a second before the limit.
	defaultJoinRate  = 5.0
	defaultJoinBurst = 100
)

// servesTLS reports whether the server terminates TLS itself.
func (c config) servesTLS() bool { return c.TLSCertFile != "" && c.TLSKeyFile != "" }

// Roles a replica can take.
const (
	roleWeb    = "web"
	roleWorker = "worker"
	roleAll    = "all"
)

func (c config) runsWeb() bool    { return c.Role != roleWorker }
func (c config) runsWorker() bool { return c.Role != roleWeb }

// loadConfig reads and validates the configuration; the error lists every
// problem found.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		DatabaseURL:   strings.TrimSpace(getenv("DATABASE_URL")),
		Addr:          strings.TrimSpace(getenv("ADDR")),
		BaseURL:       strings.TrimRight(strings.TrimSpace(getenv("BASE_URL")), "/"),
		AdminEmail:    strings.TrimSpace(getenv("ADMIN_EMAIL")),
		AdminPassword: getenv("ADMIN_PASSWORD"),
		AdminAPIToken: strings.TrimSpace(getenv("ADMIN_API_TOKEN")),
		LogFormat:     strings.ToLower(strings.TrimSpace(getenv("LOG_FORMAT"))),
		TLSCertFile:   strings.TrimSpace(getenv("TLS_CERT_FILE")),
		TLSKeyFile:    strings.TrimSpace(getenv("TLS_KEY_FILE")),
		DebugAddr:     strings.TrimSpace(getenv("DEBUG_ADDR")),
	}
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is not set (e.g. postgres://user:pass@localhost:5432/closer?sslmode=disable)"))
	} else if _, err := pgxpool.ParseConfig(c.DatabaseURL); err != nil {
		errs = append(errs, fmt.Errorf("DATABASE_URL is not a valid PostgreSQL URL: %v", err))
	}
	if c.Addr == "" {
		c.Addr = ":8080"
	}
	switch {
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		errs = append(errs, errors.New("set both TLS_CERT_FILE and TLS_KEY_FILE, or neither"))
	case c.servesTLS():
		if _, err := loadKeyPair(c.TLSCertFile, c.TLSKeyFile); err != nil {
			errs = append(errs, fmt.Errorf("TLS_CERT_FILE %s and TLS_KEY_FILE %s are not a readable PEM certificate and its key: %v", c.TLSCertFile, c.TLSKeyFile, err))
		}
	}
	scheme := "http"
	if c.servesTLS() {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		errs = append(errs, fmt.Errorf("ADDR %q is not host:port (e.g. :8080): %v", c.Addr, err))
	}
	if c.DebugAddr != "" {
		if _, _, err := net.SplitHostPort(c.DebugAddr); err != nil {
			errs = append(errs, fmt.Errorf("DEBUG_ADDR %q is not host:port (e.g. 127.0.0.1:6060): %v", c.DebugAddr, err))
		} else if c.DebugAddr == c.Addr {
			errs = append(errs, fmt.Errorf("DEBUG_ADDR %q must differ from ADDR: the profiler is never served on the public listener", c.DebugAddr))
		}
	}
	if c.BaseURL == "" && err == nil {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		c.BaseURL = scheme + "://" + net.JoinHostPort(host, port)
	} else if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fmt.Errorf("BASE_URL %q must be an http or https URL such as https://closer.example.org", c.BaseURL))
		} else if u.Path != "" {
			errs = append(errs, fmt.Errorf("BASE_URL %q must not have a path: closer serves at the root", c.BaseURL))
		} else if c.servesTLS() && u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("BASE_URL %q must be https:// when TLS_CERT_FILE is set (the server speaks only HTTPS)", c.BaseURL))
		}
	}
	if (c.AdminEmail == "") != (c.AdminPassword == "") {
		errs = append(errs, errors.New("set both ADMIN_EMAIL and ADMIN_PASSWORD, or neither"))
	}
	if c.AdminPassword != "" && len(c.AdminPassword) < 8 {
		errs = append(errs, errors.New("ADMIN_PASSWORD must have at least 8 characters"))
	}
	if c.AdminAPIToken != "" && len(c.AdminAPIToken) < 16 {
		errs = append(errs, errors.New("ADMIN_API_TOKEN must have at least 16 characters"))
	}
	c.Role = strings.ToLower(strings.TrimSpace(getenv("ROLE")))
	switch c.Role {
	case "":
		c.Role = roleAll
	case roleWeb, roleWorker, roleAll:
	default:
		errs = append(errs, fmt.Errorf("ROLE %q must be web, worker or all", c.Role))
	}
	c.RecomputeWorkers = 1
	if v := strings.TrimSpace(getenv("RECOMPUTE_WORKERS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			errs = append(errs, fmt.Errorf("RECOMPUTE_WORKERS %q must be a number from 1 to 64", v))
		} else {
			c.RecomputeWorkers = n
		}
	}
	proxies, err := parseTrustedProxies(getenv("TRUSTED_PROXIES"))
	if err != nil {
		errs = append(errs, err)
	}
	c.TrustedProxies = proxies
	if v := strings.TrimSpace(getenv("DB_MAX_REQUESTS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			errs = append(errs, fmt.Errorf("DB_MAX_REQUESTS %q must be a number from 1 to 100000", v))
		} else {
			c.DBMaxRequests = n
		}
	}
	c.JoinRate, c.JoinBurst = defaultJoinRate, defaultJoinBurst
	if v := strings.TrimSpace(getenv("JOIN_RATE")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 100000 {
			errs = append(errs, fmt.Errorf("JOIN_RATE %q must be a number of joins a second from 0 (no limit) to 100000, such as 5 or 0.5", v))
		} else {
			c.JoinRate = f
		}
	}
	if v := strings.TrimSpace(getenv("JOIN_BURST")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			errs = append(errs, fmt.Errorf("JOIN_BURST %q must be a number from 1 to 100000", v))
		} else {
			c.JoinBurst = n
		}
	}
	c.DBQueueWait = durationVar(getenv, "DB_QUEUE_WAIT", defaultDBQueueWait, &errs)
	c.DBAcquireTimeout = durationVar(getenv, "DB_ACQUIRE_TIMEOUT", defaultDBAcquireTimeout, &errs)
	c.BodyReadTimeout = durationVar(getenv, "BODY_READ_TIMEOUT", defaultBodyReadTimeout, &errs)
	c.TransferWindow = durationVar(getenv, "TRANSFER_WINDOW", defaultTransferWindow, &errs)
	c.TransferMinBytes = defaultTransferMinBytes
	if v := strings.TrimSpace(getenv("TRANSFER_MIN_BYTES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1<<10 || n > 64<<20 {
			errs = append(errs, fmt.Errorf("TRANSFER_MIN_BYTES %q must be a number of bytes from 1024 to 67108864", v))
		} else {
			c.TransferMinBytes = n
		}
	}
	c.UploadMaxStoredBytes = bytesVar(getenv, "UPLOAD_MAX_STORED_BYTES", defaultUploadMaxStoredBytes, 1<<20, &errs)
	c.StudyMaxImageBytes = bytesVar(getenv, "STUDY_MAX_IMAGE_BYTES", defaultStudyMaxImageBytes, 1<<20, &errs)
	c.ImageCacheBytes = bytesVar(getenv, "IMAGE_CACHE_BYTES", defaultImageCacheBytes, 0, &errs)
	switch c.LogFormat {
	case "":
		c.LogFormat = "text"
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("LOG_FORMAT %q must be text or json", c.LogFormat))
	}
	if v := strings.TrimSpace(getenv("REQUEST_LOG")); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("REQUEST_LOG %q must be true or false", v))
		}
		c.RequestLog = on
	}
	if lv := strings.TrimSpace(getenv("LOG_LEVEL")); lv != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lv)); err != nil {
			errs = append(errs, fmt.Errorf("LOG_LEVEL %q must be debug, info, warn or error", lv))
		}
	}
	var oidcErrs []error
	c.OIDC, c.NoPasswordLogin, oidcErrs = oidcFromEnv(getenv)
	errs = append(errs, oidcErrs...)
	var smtpErrs []error
	c.SMTP, smtpErrs = smtpFromEnv(getenv)
	errs = append(errs, smtpErrs...)
	if len(errs) > 0 {
		return config{}, fmt.Errorf("bad configuration:\n  %w", joinLines(errs))
	}
	return c, nil
}

// parseTrustedProxies reads a comma- or space-separated list of CIDR
// prefixes or single addresses (10.0.0.0/8, 192.0.2.7, fd00::/8).
func parseTrustedProxies(v string) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	var bad []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if p, err := netip.ParsePrefix(f); err == nil {
			ps = append(ps, p.Masked())
		} else if a, err := netip.ParseAddr(f); err == nil && a.Zone() == "" {
			ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
		} else {
			bad = append(bad, fmt.Sprintf("%q", f))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("TRUSTED_PROXIES: %s not a CIDR prefix or IP address (e.g. 10.0.0.0/8,192.0.2.7)", strings.Join(bad, ", "))
	}
	return ps, nil
}

// durationVar reads a duration such as 500ms or 2s from name, between 1 ms
// and 1 minute, or def when it is unset.
func durationVar(getenv func(string) string, name string, def time.Duration, errs *[]error) time.Duration {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Millisecond || d > time.Minute {
		*errs = append(*errs, fmt.Errorf("%s %q must be a duration from 1ms to 1m, such as 500ms or 2s", name, v))
		return def
	}
	return d
}

// bytesVar reads a size in bytes from name, with an optional unit (KiB,
// MiB, GiB), at least least and at most 1 TiB, or def when it is unset.
func bytesVar(getenv func(string) string, name string, def, least int64, errs *[]error) int64 {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def
	}
	num, unit := v, int64(1)
	for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			num, unit = strings.TrimSpace(strings.TrimSuffix(v, suffix)), u
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/unit || n*unit < least {
		*errs = append(*errs, fmt.Errorf("%s %q must be a size from %d bytes to 1 TiB, such as 268435456 or 256MiB", name, v, least))
		return def
	}
	return n * unit
}

func joinLines(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "\n  "))
}

// logger builds the slog logger the configuration asks for.
func (c config) logger(w interface{ Write([]byte) (int, error) }) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
