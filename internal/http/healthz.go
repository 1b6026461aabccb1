package http

import "net/http"

// healthz reports whether the app can reach PostgreSQL (GET /healthz).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.Pool().Ping(r.Context()); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write([]byte("ok\n"))
	return err
}
