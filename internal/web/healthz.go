package web

import (
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/collect"
)

// healthz reports whether the app can store answers now (GET /healthz): 200
// "ok", or 503 with Retry-After and the reason ("database unavailable: disk
// full", "...: read-only", ...) while PostgreSQL does not answer (down,
// restarting, refusing connections, no pool connection free within the
// acquire timeout) or does not take writes (out of disk or other
// resources, a standby, default_transaction_read_only). A ping would pass
// the last two, so it runs the store's write probe (collect.WriteProbe:
// it writes a row that must allocate a page). It is plain text for load
// balancers and monitors.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.store.WriteProbe(r.Context()); err != nil {
		if r.Context().Err() != nil {
			return err // the client went away or the route's timeout ended: handle answers
		}
		reason := collect.CannotStoreReason(err)
		s.log.WarnContext(r.Context(), "health check: database unavailable", "reason", reason, "err", err,
			"request_id", middleware.GetReqID(r.Context()))
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, err := w.Write([]byte("database unavailable: " + reason + "\n"))
		return err
	}
	_, err := w.Write([]byte("ok\n"))
	return err
}
