package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// addPerson gives the account with the typed e-mail a role in the study,
// or invites an e-mail without an account (POST
// /admin/studies/{slug}/people, owners only). A refusal (a bad address or
// role, the last owner's demotion) re-renders the page with the reason.
func (s *Server) addPerson(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	v, err := s.peopleView(r)
	if err != nil {
		return err
	}
	email := r.PostForm.Get("email")
	link, inv, err := s.grantByEmail(r, v.Study, email, r.PostForm.Get("role"))
	switch collect.KindOf(err) {
	case 0:
		v.Added, v.InviteLink = email, link
		if link != "" && s.cfg.Mailer != nil {
			// After the invitation's commit: a slow or failing mail
			// server holds no lock and undoes nothing.
			v.Mailed, v.MailError = s.mailInvitation(r, v.Study, inv, link)
		}
	case study.KindInvalid, study.KindConflict, study.KindNotFound:
		v.Error, v.Email = userMessage(err), email
		if v, err = s.refreshedPeople(r, v); err != nil {
			return err
		}
		return s.render(w, r, http.StatusUnprocessableEntity, templates.PeoplePage(v))
	default:
		return err
	}
	if v, err = s.refreshedPeople(r, v); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.PeoplePage(v))
}

// grantByEmail gives the account with the e-mail the named role, or, when
// no account has the e-mail, invites it: the invitation and its link are
// returned for the owner to pass on (and for the caller to mail).
func (s *Server) grantByEmail(r *http.Request, st study.Study, email, roleName string) (string, study.Invitation, error) {
	role, err := study.ParseRole(roleName)
	if err != nil {
		return "", study.Invitation{}, err
	}
	by := adminFrom(r.Context()).ID
	a, err := s.accounts.AdminByEmail(r.Context(), email)
	if collect.KindOf(err) == study.KindNotFound {
		plain, inv, err := s.accounts.Invite(r.Context(), st.ID, email, role, by)
		if err != nil {
			return "", study.Invitation{}, err
		}
		return s.publicURL("/invite/" + plain), inv, nil
	}
	if err != nil {
		return "", study.Invitation{}, err
	}
	return "", study.Invitation{}, s.accounts.GrantRole(r.Context(), st.ID, a.ID, role, by)
}

// refreshedPeople is v with the study's members read again.
func (s *Server) refreshedPeople(r *http.Request, v templates.People) (templates.People, error) {
	ms, err := s.accounts.Members(r.Context(), v.Study.ID)
	if err != nil {
		return v, err
	}
	v.Members = ms
	v.Invitations, err = s.accounts.PendingInvitations(r.Context(), v.Study.ID)
	return v, err
}
