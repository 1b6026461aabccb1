package web

import (
	"net/http"

	"github.com/closer-lab/closer/templates"
)

// people shows who holds which role in the study, and to its owners the
// form that gives one (GET /admin/studies/{slug}/people; issue 30).
func (s *Server) people(w http.ResponseWriter, r *http.Request) error {
	v, err := s.peopleView(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.PeoplePage(v))
}

// peopleView is the people page of the request's study.
func (s *Server) peopleView(r *http.Request) (templates.People, error) {
	st, err := s.studyFromURL(r)
	if err != nil {
		return templates.People{}, err
	}
	ms, err := s.accounts.Members(r.Context(), st.ID)
	if err != nil {
		return templates.People{}, err
	}
	v := templates.People{Study: st, Members: ms, Can: canFrom(r.Context())}
	if v.Can.Do("POST /admin/studies/{slug}/people") {
		if v.Invitations, err = s.accounts.PendingInvitations(r.Context(), st.ID); err != nil {
			return templates.People{}, err
		}
	}
	return v, nil
}
