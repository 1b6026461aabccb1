package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// editStudyForm shows the study's form (GET /admin/studies/{slug}/edit).
func (s *Server) editStudyForm(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	in := collect.StudyInput{Slug: st.Slug, Title: st.Title, Instructions: st.Instructions, Debrief: st.Debrief,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design}
	if in.DesignConfig, err = s.store.DesignConfigOf(r.Context(), st.ID); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.StudyFormPage(s.studyForm(false, "/admin/studies/"+st.Slug, in, "")))
}

// updateStudy saves the study's form (POST /admin/studies/{slug}).
func (s *Server) updateStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	in, err := studyInput(r)
	if err != nil {
		return err
	}
	updated, err := s.store.UpdateStudy(r.Context(), st.ID, in)
	if formError(err) {
		return s.render(w, r, http.StatusUnprocessableEntity,
			templates.StudyFormPage(s.studyForm(false, "/admin/studies/"+st.Slug, in, userMessage(err))))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+updated.Slug, http.StatusSeeOther)
	return nil
}
