package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// removePerson takes an account's role in the study away
// (POST /admin/studies/{slug}/people/{account}/remove, owners only); the
// only owner's is refused.
func (s *Server) removePerson(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "account"), 10, 64)
	if err != nil {
		return errNotFound
	}
	v, err := s.peopleView(r)
	if err != nil {
		return err
	}
	err = s.accounts.RevokeRole(r.Context(), v.Study.ID, id)
	if k := collect.KindOf(err); k == study.KindConflict {
		v.Error = userMessage(err)
		return s.render(w, r, http.StatusConflict, templates.PeoplePage(v))
	} else if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+v.Study.Slug+"/people", http.StatusSeeOther)
	return nil
}
