package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// addAdmin gives a colleague an account with the e-mail and initial
// password typed in (POST /admin/account/admins, site administrators
// only): a researcher's when the form's kind says so, a site
// administrator's otherwise. A taken e-mail, a bad
// address or a short password re-renders the page with the reason and
// stores nothing.
func (s *Server) addAdmin(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	create := s.accounts.CreateAdmin
	if r.PostForm.Get("kind") == "researcher" {
		create = s.accounts.CreateResearcher
	}
	added, err := create(r.Context(), r.PostForm.Get("email"), r.PostForm.Get("password"))
	if err != nil {
		switch collect.KindOf(err) {
		case study.KindInvalid, study.KindConflict:
		default:
			return err
		}
	}
	v, verr := s.accountView(r)
	if verr != nil {
		return verr
	}
	status := http.StatusOK
	if err != nil {
		v.Error, status = userMessage(err), http.StatusUnprocessableEntity
		v.AdminEmail = r.PostForm.Get("email")
	} else {
		v.AddedAdmin = added.Email
	}
	return s.render(w, r, status, templates.AccountPage(v))
}
