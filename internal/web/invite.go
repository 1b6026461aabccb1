package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// invite shows an invited collaborator the form that sets their password
// (GET /invite/{token}; issue 30). An unknown, used or expired link is a
// 404 that says so.
func (s *Server) invite(w http.ResponseWriter, r *http.Request) error {
	v, err := s.inviteView(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.InvitePage(v))
}

// inviteView is the invitation page of the link's token.
func (s *Server) inviteView(r *http.Request) (templates.Invite, error) {
	token := chi.URLParam(r, "token")
	inv, err := s.accounts.Invitation(r.Context(), token)
	if err != nil {
		return templates.Invite{}, err
	}
	st, err := s.store.StudyByID(r.Context(), inv.StudyID)
	if err != nil {
		return templates.Invite{}, err
	}
	return templates.Invite{Invitation: inv, StudyTitle: st.Title, Token: token}, nil
}

// acceptInvite creates the invited collaborator's account with the
// password typed in and gives it the role, once (POST /invite/{token});
// then they log in.
func (s *Server) acceptInvite(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	v, err := s.inviteView(r)
	if err != nil {
		return err
	}
	a, inv, err := s.accounts.AcceptInvitation(r.Context(), v.Token, r.PostForm.Get("password"))
	if err != nil {
		if k := collect.KindOf(err); k == study.KindInvalid || k == study.KindConflict {
			v.Error = userMessage(err)
			return s.render(w, r, http.StatusUnprocessableEntity, templates.InvitePage(v))
		}
		return err
	}
	st, err := s.store.StudyByID(r.Context(), inv.StudyID)
	if err != nil {
		return err
	}
	s.audit(r, a, study.AuditEntry{StudyID: st.ID, StudySlug: st.Slug, Action: "accepted an invitation", Detail: "role=" + inv.Role.String()})
	http.Redirect(w, r, "/admin/login?next="+urlQueryEscape("/admin/studies/"+st.Slug), http.StatusSeeOther)
	return nil
}
