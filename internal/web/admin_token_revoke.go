package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// revokeToken revokes one of the admin's API tokens
// (POST /admin/account/tokens/{id}/revoke).
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	if err := s.accounts.RevokeAPIToken(r.Context(), adminFrom(r.Context()).ID, id); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/account", http.StatusSeeOther)
	return nil
}
