package web

import (
	"context"
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

type tokenKey struct{}

// tokenScope is what the request's API token allows; the zero value (a
// browser session, no token) limits nothing.
type tokenScope struct {
	token bool
}

// tokenFrom returns the scope requireToken found.
func tokenFrom(ctx context.Context) tokenScope {
	t, _ := ctx.Value(tokenKey{}).(tokenScope)
	return t
}

// limit is the account's role in the study as far as the token lets it act.
func (t tokenScope) limit(_ int64, role study.Role) study.Role {
	return role
}

// requireToken authenticates the API's researcher routes by a bearer token
// (never a cookie) and puts its account and scope in the context for
// authorize.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			s.handle(func(http.ResponseWriter, *http.Request) error {
				return unauthorized("send an admin API token as Authorization: Bearer <token>")
			})(w, r)
			return
		}
		a, err := s.accounts.APITokenAdmin(r.Context(), token)
		if err != nil {
			s.handle(func(http.ResponseWriter, *http.Request) error { return err })(w, r)
			return
		}
		ctx := context.WithValue(r.Context(), adminKey{}, a)
		ctx = context.WithValue(ctx, tokenKey{}, tokenScope{token: true})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
