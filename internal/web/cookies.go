package web

import (
	"net/http"
	"net/url"
	"time"
)

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// setCookie sets an HttpOnly, SameSite=Lax cookie (Secure behind HTTPS).
func (s *Server) setCookie(w http.ResponseWriter, name, value, path string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: int(maxAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure,
	})
}

// clearCookie removes a cookie.
func (s *Server) clearCookie(w http.ResponseWriter, name, path string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure,
	})
}
