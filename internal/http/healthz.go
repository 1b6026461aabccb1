package http

import (
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
)

// healthz reports whether the app can reach PostgreSQL (GET /healthz): 200
// "ok", or 503 with Retry-After while the database does not answer (down,
// restarting, refusing connections, or no pool connection free within the
// acquire timeout). It is plain text for load balancers and monitors.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.store.Ping(r.Context()); err != nil {
		if r.Context().Err() != nil {
			return err // the client went away or the route's timeout ended: handle answers
		}
		s.log.WarnContext(r.Context(), "health check: database unavailable", "err", err,
			"request_id", middleware.GetReqID(r.Context()))
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, err := w.Write([]byte("database unavailable\n"))
		return err
	}
	_, err := w.Write([]byte("ok\n"))
	return err
}
