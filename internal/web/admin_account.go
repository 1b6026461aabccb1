package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// presentedSession is the session token the request's cookie carries ("" if none).
func presentedSession(r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// accountView fills the account page.
func (s *Server) accountView(r *http.Request) (templates.Account, error) {
	a := adminFrom(r.Context())
	tokens, err := s.accounts.ListAPITokens(r.Context(), a.ID)
	if err != nil {
		return templates.Account{}, err
	}
	sessions, err := s.accounts.ListSessions(r.Context(), a.ID, presentedSession(r))
	if err != nil {
		return templates.Account{}, err
	}
	var admins []study.Admin
	if a.SiteAdmin { // a researcher does not see other labs' accounts (issue 30)
		if admins, err = s.accounts.ListAdmins(r.Context()); err != nil {
			return templates.Account{}, err
		}
	}
	return templates.Account{Admin: a, Tokens: tokens, Sessions: sessions, Admins: admins, Can: canFrom(r.Context())}, nil
}

// account shows the admin's API tokens and sessions, and every admin
// (GET /admin/account).
func (s *Server) account(w http.ResponseWriter, r *http.Request) error {
	v, err := s.accountView(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.AccountPage(v))
}
