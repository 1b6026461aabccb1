package http

import (
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/admin"
	}
	return next
}

// loginForm shows the login page (GET /admin/login).
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := s.store.SessionAdmin(r.Context(), c.Value); err == nil {
			http.Redirect(w, r, "/admin", http.StatusSeeOther)
			return nil
		}
	}
	return s.render(w, r, http.StatusOK, templates.LoginPage("", "", safeNext(r.URL.Query().Get("next"))))
}

// login checks the e-mail and password and starts a session (POST /admin/login).
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	email, next := r.PostForm.Get("email"), safeNext(r.PostForm.Get("next"))
	a, err := s.store.Authenticate(r.Context(), email, r.PostForm.Get("password"))
	if collect.KindOf(err) == collect.KindUnauthorized {
		return s.render(w, r, http.StatusUnauthorized, templates.LoginPage(email, "Wrong e-mail or password.", next))
	}
	if err != nil {
		return err
	}
	token, err := s.store.CreateSession(r.Context(), a.ID, s.cfg.SessionTTL)
	if err != nil {
		return err
	}
	s.setCookie(w, sessionCookie, token, "/", s.cfg.SessionTTL)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}
