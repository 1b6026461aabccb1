package web

import (
	"context"
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

type tokenKey struct{}

// tokenScope is the request's API token, if any (a browser session has
// none and is limited only by its account's role).
type tokenScope struct {
	token bool
	scope study.TokenScope
}

// tokenFrom returns the token requireToken found.
func tokenFrom(ctx context.Context) tokenScope {
	t, _ := ctx.Value(tokenKey{}).(tokenScope)
	return t
}

// refuse says why the token may not do what a route that needs n does in
// the study (nil: it may). A study outside the token's list is not found.
func (t tokenScope) refuse(studyID int64, n need) error {
	if !t.token {
		return nil
	}
	switch {
	case !t.scope.Covers(studyID):
		return study.NotFound("study")
	case n == needViewer && !t.scope.Read:
		return &httpError{status: http.StatusForbidden, msg: "this API token may not read results"}
	case n == needEditor && !t.scope.Write:
		return &httpError{status: http.StatusForbidden, msg: "this API token may not write"}
	case n == needOwner:
		return &httpError{status: http.StatusForbidden, msg: "no API token may do what only a study's owner may"}
	}
	return nil
}

// identifying reports whether an account with role may see identifying
// data (external ids) through this request.
func (t tokenScope) identifying(role study.Role) bool {
	return role >= study.RoleEditor && (!t.token || t.scope.Identifying)
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
		a, scope, err := s.accounts.APITokenAdmin(r.Context(), token)
		if err != nil {
			s.handle(func(http.ResponseWriter, *http.Request) error { return err })(w, r)
			return
		}
		ctx := context.WithValue(r.Context(), adminKey{}, a)
		ctx = context.WithValue(ctx, tokenKey{}, tokenScope{token: true, scope: scope})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
