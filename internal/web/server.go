// Package http is closer's web front: the chi router, middleware (request
// id, access log, recovery, timeouts, security headers, cross-origin
// protection, admin sessions) and one handler per action. Handlers return
// an error; one adapter (handle) turns errors into a status and an HTML
// page or a JSON body, and logs only server errors.
package web

import (
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/mailer"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/static"
)

// Config is what the web front needs to know about its deployment.
type Config struct {
	// BaseURL is the public URL of the app (e.g. https://closer.example.org),
	// used for public links and image URLs in the API. Cookies are Secure
	// when it is https.
	BaseURL string
	// MaxUploadBytes bounds one upload request; MaxImageBytes one image.
	MaxUploadBytes int64
	MaxImageBytes  int64
	// MaxUploadFiles bounds the parts of one upload request and the files
	// it holds, zip entries included, so that the list of what was
	// accepted and refused stays small (0: media.MaxZipEntries, which also
	// bounds one zip; a smaller value bounds a zip too).
	MaxUploadFiles int
	// ItemLimits bound the image bytes one upload stores and a study holds
	// (zero: no bound; cmd/web sets both).
	ItemLimits store.ItemLimits
	// ImageCacheBytes is the memory of verified images kept to serve /img
	// (0: DefaultImageCacheBytes; negative: none, every image streamed).
	ImageCacheBytes int64
	// SessionTTL is how long an admin stays logged in.
	SessionTTL time.Duration
	// Timeout bounds ordinary requests (not exports, not uploads).
	Timeout time.Duration
	// EstimateLimit is the time an estimate before opening may take in
	// its request (0: estimateShare of Timeout).
	EstimateLimit time.Duration
	// HSTSMaxAge, when positive, sends Strict-Transport-Security with this
	// max-age on every response. Set it when the app serves HTTPS itself;
	// behind a TLS proxy the proxy sends it.
	HSTSMaxAge time.Duration
	// MaxDBRequests bounds the requests that use the database at once,
	// QueueWait how long one waits for a turn, AcquireTimeout how long it
	// then waits for a pool connection; past either wait it gets 503 with
	// Retry-After (shed.go). Zero: 64, 1 s, 2 s.
	MaxDBRequests  int
	QueueWait      time.Duration
	AcquireTimeout time.Duration
	// BodyReadTimeout bounds the time a request body (other than an
	// upload's) takes to arrive; TransferWindow and TransferMinBytes the
	// pace of uploads and of responses: at least TransferMinBytes every
	// TransferWindow, or the connection is cut (limits.go). Zero: 10 s,
	// 30 s, 64 KiB.
	BodyReadTimeout  time.Duration
	TransferWindow   time.Duration
	TransferMinBytes int
	// Jobs enqueues and cancels recompute jobs (nil: the dashboard shows
	// results but cannot start or cancel a recompute).
	Jobs Jobs
	// Purges enqueues the purge of a deleted study (nil: a worker
	// replica's purge scan finds it within a minute).
	Purges Purges
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (client_addr.go); without them the header is ignored.
	TrustedProxies []netip.Prefix
	// LoginAccountLimit and LoginAddressLimit throttle failed admin logins
	// per e-mail and per client address (zero: the defaults in admin_login.go).
	LoginAccountLimit account.LoginLimit
	LoginAddressLimit account.LoginLimit
	// JoinRate and JoinBurst limit the participants one client address
	// creates or resumes: JoinRate a second on average, JoinBurst at once
	// (join_limit.go; 0 burst: JoinRate rounded up). JoinRate 0: no limit
	// (cmd/web sets the deployed defaults).
	JoinRate  float64
	JoinBurst int
	// Now is the login throttle's clock (nil: time.Now); tests move it.
	Now func() time.Time
	// RequestLog logs one line per request at info level; without it only
	// failures are logged (5xx by the error adapter, panics).
	RequestLog bool
	// OIDC, when set, adds single sign-on with an OpenID Connect provider
	// (oidc.go); NoPasswordLogin then switches the password login off.
	OIDC            *OIDCConfig
	NoPasswordLogin bool
	// Mailer, when set, e-mails invitations (invite_mail.go); without it
	// the people page shows the link for the owner to pass on, as it
	// always does.
	Mailer *mailer.Mailer
	// MTurkTestOrigins are, for tests only, local stand-ins for MTurk
	// (origins such as http://localhost:8081): accepted as an MTurk
	// link's turkSubmitTo and allowed to frame MTurk studies' pages
	// besides MTurk's own (collect.MTurkFrameOrigins, MTurkSubmitOrigins).
	// cmd/web never sets it (no environment variable reaches it), so a
	// deployment trusts MTurk's own sites only.
	MTurkTestOrigins []string
}

// Server holds the handlers' dependencies.
type Server struct {
	store    *collect.Store
	accounts *account.Store // admins, sessions, API tokens, the login throttle
	cfg      Config
	log      *slog.Logger
	secure   bool
	dash     *dashCache // the dashboard's caches (dashboard_cache.go)
	texts    markdownCache
	joins    joinLimiter   // participants created per client address
	images   *imageCache   // verified images served by /img (image_cache.go)
	lang     *i18n.Catalog // the participant pages' texts (language.go)
	oidc     oidcClient    // the single sign-on provider, found on first use (oidc.go)

	slots chan struct{} // one per request using the database (shed.go)

	// mturkFrameOrigins may frame MTurk studies, mturkSubmitOrigins
	// receive their assignments (mturk.go).
	mturkFrameOrigins, mturkSubmitOrigins []string
}

// New returns the app's router.
func New(store *collect.Store, accounts *account.Store, cfg Config, log *slog.Logger) http.Handler {
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 512 << 20
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = 10 << 20
	}
	if cfg.MaxUploadFiles <= 0 || cfg.MaxUploadFiles > media.MaxZipEntries {
		cfg.MaxUploadFiles = media.MaxZipEntries
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 7 * 24 * time.Hour
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	cfg.loginDefaults()
	cfg = withShedDefaults(cfg)
	s := &Server{store: store, accounts: accounts, cfg: cfg, log: log, secure: strings.HasPrefix(cfg.BaseURL, "https://"), dash: newDashCache(store)}
	s.slots = make(chan struct{}, cfg.MaxDBRequests)
	lang, err := i18n.New()
	if err != nil {
		// The catalog is compiled in, and its package's tests build it:
		// this is a programming error, not a condition to handle.
		panic(err)
	}
	s.lang = lang
	if cfg.ImageCacheBytes == 0 {
		cfg.ImageCacheBytes = DefaultImageCacheBytes
	}
	s.images = newImageCache(cfg.ImageCacheBytes)
	s.mturkFrameOrigins = withTestOrigins(study.MTurkFrameOrigins, cfg)
	s.mturkSubmitOrigins = withTestOrigins(study.MTurkSubmitOrigins, cfg)

	cop := http.NewCrossOriginProtection()
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Scheme != "" && u.Host != "" {
		// Behind a proxy that rewrites Host, the public origin is still same-origin.
		_ = cop.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	timeout := middleware.Timeout(cfg.Timeout)
	uploadTimeout := middleware.Timeout(longTimeout)

	r := chi.NewRouter()
	// deadlines comes before accessLog: the writer it wraps stays below
	// the access log's, which the error adapter looks for.
	r.Use(middleware.RequestID, s.deadlines, s.accessLog, s.recoverer, s.securityHeaders, s.refuseBadText, s.shed)
	r.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error { return errNotFound }))
	r.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &httpError{status: http.StatusMethodNotAllowed, msg: "method not allowed"}
	}))

	r.With(timeout).Get("/healthz", s.handle(s.healthz))
	r.Handle("/static/*", http.StripPrefix("/static/", staticFiles(static.FS)))
	r.With(timeout).Get("/img/{sha256}", s.handle(s.itemImage))

	// JSON API: bearer tokens, no cookies, so no cross-origin protection.
	r.Route("/api/v1", func(r chi.Router) {
		r.With(timeout).Post("/studies/{slug}/participants", s.handle(s.apiCreateParticipant))
		r.With(timeout).Get("/studies/{slug}/next", s.handle(s.apiNext))
		r.With(timeout).Post("/answers", s.handle(s.apiAnswer))
		r.With(s.requireToken, s.authorize).Get("/studies/{slug}/triplets.csv", s.handle(s.apiExport)) // streamed: no timeout
		r.With(timeout, s.requireToken, s.authorize).Post("/studies/{slug}/status", s.handle(s.apiSetStatus))
		r.With(timeout, s.requireToken, s.authorize).Post("/studies/{slug}/participants/erase", s.handle(s.apiEraseParticipant))
	})

	// Browser pages: every state-changing request must be same-origin.
	r.Group(func(r chi.Router) {
		r.Use(cop.Handler)
		r.Group(func(r chi.Router) {
			r.Use(timeout)
			r.Get("/", http.RedirectHandler("/admin", http.StatusSeeOther).ServeHTTP)
			r.Get("/s/{slug}", s.handle(s.landing))
			r.Post("/s/{slug}/start", s.handle(s.start))
			r.Get("/s/{slug}/declined", s.handle(s.declined))
			r.Get("/s/{slug}/q", s.handle(s.question))
			r.Post("/s/{slug}/answer", s.handle(s.answer))
			r.Get("/s/{slug}/done", s.handle(s.done))
			r.Get("/admin/login", s.handle(s.loginForm))
			r.Post("/admin/login", s.handle(s.login))
			r.Post("/admin/logout", s.handle(s.logout))
			r.Get("/admin/login/oidc", s.handle(s.oidcStart))
			r.Get("/admin/login/oidc/callback", s.handle(s.oidcCallback))
			r.Get("/invite/{token}", s.handle(s.invite))
			r.Post("/invite/{token}", s.handle(s.acceptInvite))
		})
		r.Group(func(r chi.Router) {
			r.Use(s.requireAdmin, s.authorize) // authorize: the route's role (roles.go)
			r.With(timeout).Get("/admin", s.handle(s.studies))
			r.With(timeout).Get("/admin/studies/new", s.handle(s.newStudyForm))
			r.With(timeout).Post("/admin/studies", s.handle(s.createStudy))
			r.With(timeout).Get("/admin/studies/{slug}", s.handle(s.showStudy))
			r.With(timeout).Get("/admin/studies/{slug}/edit", s.handle(s.editStudyForm))
			r.With(timeout).Post("/admin/studies/{slug}", s.handle(s.updateStudy))
			r.With(timeout).Post("/admin/studies/{slug}/delete", s.handle(s.deleteStudy))
			r.With(timeout).Post("/admin/studies/{slug}/status", s.handle(s.setStudyStatus))
			r.With(timeout).Post("/admin/studies/{slug}/preview", s.handle(s.startPreview))
			r.With(timeout).Post("/admin/studies/{slug}/previews/delete", s.handle(s.deletePreviews))
			r.With(timeout).Post("/admin/studies/{slug}/estimate", s.handle(s.runEstimate))
			r.With(uploadTimeout).Post("/admin/studies/{slug}/items", s.handle(s.uploadItems))
			r.With(uploadTimeout).Post("/admin/studies/{slug}/texts", s.handle(s.uploadTexts))
			r.With(uploadTimeout).Post("/admin/studies/{slug}/gold", s.handle(s.uploadGold))
			r.Get("/admin/studies/{slug}/triplets.csv", s.handle(s.exportCSV)) // streamed: no timeout
			r.With(timeout).Get("/admin/studies/{slug}/trials.csv", s.handle(s.exportTrials))
			r.With(timeout).Get("/admin/studies/{slug}/qr.png", s.handle(s.studyQR))
			r.With(timeout).Get("/admin/account", s.handle(s.account))
			r.With(timeout).Post("/admin/account/tokens", s.handle(s.createToken))
			r.With(timeout).Post("/admin/account/admins", s.handle(s.addAdmin))
			r.With(timeout).Post("/admin/account/tokens/{id}/revoke", s.handle(s.revokeToken))
			r.With(timeout).Post("/admin/account/sessions/{id}/revoke", s.handle(s.revokeSession))
			r.With(timeout).Post("/admin/account/sessions/revoke-others", s.handle(s.revokeOtherSessions))
			// Results dashboard, exports and imports (issue 6).
			r.With(timeout).Get("/admin/studies/{slug}/dashboard", s.handle(s.dashboard))
			r.With(timeout).Get("/admin/studies/{slug}/dashboard/status", s.handle(s.dashboardStatus))
			r.With(timeout).Post("/admin/studies/{slug}/dashboard/recompute", s.handle(s.dashboardRecompute))
			r.With(timeout).Post("/admin/studies/{slug}/dashboard/cancel", s.handle(s.dashboardCancel))
			r.With(timeout).Post("/admin/studies/{slug}/dashboard/settings", s.handle(s.dashboardSettings))
			r.With(timeout).Post("/admin/studies/{slug}/participants/{participant}/exclude", s.handle(s.excludeParticipant))
			r.With(timeout).Get("/admin/studies/{slug}/embedding.csv", s.handle(s.embeddingCSV))
			r.With(timeout).Get("/admin/studies/{slug}/participants.csv", s.handle(s.participantsCSV))
			r.With(timeout).Get("/admin/studies/{slug}/kernel-pca.csv", s.handle(s.kernelPCACSV))
			r.With(uploadTimeout).Get("/admin/studies/{slug}/kernel.csv", s.handle(s.kernelCSV))
			r.Get("/admin/studies/{slug}/bundle.zip", s.handle(s.exportBundle)) // streamed: no timeout
			r.With(timeout).Get("/admin/import", s.handle(s.importForm))
			r.With(uploadTimeout).Post("/admin/import/bundle", s.handle(s.importBundle))
			r.With(uploadTimeout).Post("/admin/import/triplets", s.handle(s.importTriplets))
			// Who may do what in a study (issue 30).
			r.With(timeout).Get("/admin/studies/{slug}/people", s.handle(s.people))
			r.With(timeout).Post("/admin/studies/{slug}/people", s.handle(s.addPerson))
			r.With(timeout).Post("/admin/studies/{slug}/people/{account}/remove", s.handle(s.removePerson))
			r.With(timeout).Get("/admin/studies/{slug}/history", s.handle(s.studyHistory))
			r.With(timeout).Get("/admin/studies/{slug}/participants/erase", s.handle(s.eraseForm))
			r.With(timeout).Post("/admin/studies/{slug}/participants/erase", s.handle(s.eraseParticipant))
			r.With(timeout).Post("/admin/studies/{slug}/retention", s.handle(s.setRetention))
			r.Get("/admin/audit.csv", s.handle(s.auditCSV)) // streamed: no timeout
		})
	})
	return r
}

// publicURL returns the absolute (or, without a base URL, root-relative) URL of path.
func (s *Server) publicURL(path string) string { return s.cfg.BaseURL + path }

// imageURL is where an item's image is served (content-addressed).
func (s *Server) imageURL(sha string) string { return s.publicURL("/img/" + sha) }
