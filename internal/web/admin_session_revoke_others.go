package web

import "net/http"

// revokeOtherSessions ends every session of the admin but this browser's
// (POST /admin/account/sessions/revoke-others).
func (s *Server) revokeOtherSessions(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.accounts.RevokeOtherSessions(r.Context(), adminFrom(r.Context()).ID, presentedSession(r)); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/account", http.StatusSeeOther)
	return nil
}
