package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// createToken creates an API token and shows it once (POST /admin/account/tokens).
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	secret, _, err := s.accounts.CreateAPIToken(r.Context(), adminFrom(r.Context()).ID, r.PostForm.Get("name"))
	if err != nil && collect.KindOf(err) != study.KindInvalid {
		return err
	}
	v, verr := s.accountView(r)
	if verr != nil {
		return verr
	}
	status := http.StatusOK
	if err != nil {
		v.Error, status = userMessage(err), http.StatusUnprocessableEntity
	}
	v.NewToken = secret
	return s.render(w, r, status, templates.AccountPage(v))
}
