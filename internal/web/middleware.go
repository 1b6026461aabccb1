package web

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// accessLog sets X-Request-Id and, when Config.RequestLog asks for it,
// logs one line per request through slog.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.RequestLog {
			w.Header().Set("X-Request-Id", middleware.GetReqID(r.Context()))
			next.ServeHTTP(w, r)
			return
		}
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		ww.Header().Set("X-Request-Id", middleware.GetReqID(r.Context()))
		start := time.Now()
		next.ServeHTTP(ww, r)
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		s.log.InfoContext(r.Context(), "request",
			"method", r.Method, "path", r.URL.Path, "status", status, "bytes", ww.BytesWritten(),
			"duration_ms", time.Since(start).Milliseconds(), "request_id", middleware.GetReqID(r.Context()))
	})
}

// recoverer turns a panic into a logged 500, or, when the response was
// already started, into a cut connection: a 500 body appended to a
// half-sent file would make it look whole.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := trackStart(w)
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", "value", fmt.Sprint(v), "stack", string(debug.Stack()),
					"request_id", middleware.GetReqID(r.Context()))
				if responseStarted(tw) {
					panic(http.ErrAbortHandler)
				}
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// securityHeaders sets headers every response carries.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", contentSecurityPolicy("'none'", "'self'"))
		if s.cfg.HSTSMaxAge > 0 {
			h.Set("Strict-Transport-Security", fmt.Sprintf("max-age=%d", int64(s.cfg.HSTSMaxAge/time.Second)))
		}
		next.ServeHTTP(w, r)
	})
}

// sessionCookie names the admin session cookie.
const sessionCookie = "closer_session"

type adminKey struct{}

// adminFrom returns the logged-in admin put in the context by requireAdmin.
func adminFrom(ctx context.Context) study.Admin {
	a, _ := ctx.Value(adminKey{}).(study.Admin)
	return a
}

// requireAdmin lets logged-in admins through and sends everyone else to the
// login page (GET) or refuses them (other methods). A stranger's body is
// never read: an admin route's body (not an upload's, which its handler
// streams) is read and checked once the session is, without the request's
// slot (readAdminBody).
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err == nil {
			a, err := s.accounts.SessionAdmin(r.Context(), c.Value)
			if err == nil {
				if err := s.readAdminBody(w, r); err != nil {
					s.handle(func(http.ResponseWriter, *http.Request) error { return err })(w, r)
					return
				}
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), adminKey{}, a)))
				return
			}
			if collect.KindOf(err) != study.KindUnauthorized {
				s.handle(func(http.ResponseWriter, *http.Request) error { return err })(w, r)
				return
			}
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, "/admin/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s.handle(func(http.ResponseWriter, *http.Request) error { return unauthorized("please log in") })(w, r)
	})
}

// readAdminBody reads an admin form's body, bounded by its route's limit,
// while the request holds no slot, and checks its text as refuseBadText
// does for the other routes.
func (s *Server) readAdminBody(w http.ResponseWriter, r *http.Request) error {
	a := admissionFrom(r.Context())
	if a == nil || a.limits.kind != bodyAdmin || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	return s.offSlot(r, func() error { return readForm(w, r, a.limits.body) })
}
