package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// startPreview makes the researcher's browser a preview session of the
// study and sends it to the first question (POST
// /admin/studies/{slug}/preview; an admin route, so logged in and
// same-origin). It works whatever the study's status (a draft included)
// and platform, without a platform id: the preview is a participant
// marked preview (collect.Store.CreatePreviewParticipant), which takes no
// quota place, freezes nothing and stays out of results and exports. As a
// participant's start does, it sets the participant cookie of the study's
// pages (on MTurk the question page's URL carries the token instead); a
// participant of the study this browser held before is replaced.
func (s *Server) startPreview(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	_, token, err := s.store.CreatePreviewParticipant(r.Context(), st.ID)
	if formError(err) {
		v, perr := s.studyPage(r, st)
		if perr != nil {
			return perr
		}
		v.Error = userMessage(err)
		return s.render(w, r, http.StatusUnprocessableEntity, templates.StudyShowPage(v))
	}
	if err != nil {
		return err
	}
	s.log.Info("preview started", "study", st.ID, "slug", st.Slug, "status", st.Status)
	if st.Platform.Kind != study.PlatformMTurk { // MTurk's pages carry the token (participantTokenField)
		s.setCookie(w, participantCookie, token, "/s/"+st.Slug, participantCookieTTL)
	}
	http.Redirect(w, r, participantPath(st, token, "/q"), http.StatusSeeOther)
	return nil
}

// deletePreviews deletes the study's preview sessions with their answers
// (POST /admin/studies/{slug}/previews/delete) and goes back to the
// study's page, which says how many went.
func (s *Server) deletePreviews(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	n, err := s.store.DeletePreviews(r.Context(), st.ID)
	if err != nil {
		return err
	}
	s.log.Info("previews deleted", "study", st.ID, "slug", st.Slug, "previews", n)
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?msg=previews-deleted", http.StatusSeeOther)
	return nil
}
