package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// revokeSession ends one of the admin's sessions
// (POST /admin/account/sessions/{id}/revoke). Ending the current one logs
// this browser out.
func (s *Server) revokeSession(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	if err := s.accounts.RevokeSession(r.Context(), adminFrom(r.Context()).ID, id); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/account", http.StatusSeeOther)
	return nil
}
