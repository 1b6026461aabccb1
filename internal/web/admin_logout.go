package web

import "net/http"

// logout ends the session (POST /admin/logout).
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := s.accounts.DeleteSession(r.Context(), c.Value); err != nil {
			return err
		}
	}
	s.clearCookie(w, sessionCookie, "/")
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
	return nil
}
