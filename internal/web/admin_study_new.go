package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// newStudyForm shows an empty study form (GET /admin/studies/new).
func (s *Server) newStudyForm(w http.ResponseWriter, r *http.Request) error {
	in := study.StudyInput{QuestionsPerParticipant: 50, Status: study.StatusDraft, Design: study.DesignRandom,
		DesignConfig: study.DesignConfig{Repeats: 1, Landmarks: 10}, Language: i18n.Default, Layout: study.LayoutAbove}
	return s.render(w, r, http.StatusOK, templates.StudyFormPage(s.studyForm(true, "/admin/studies", in, "", "", trialForm{}, armsView{heldout: "0"}, false, "")))
}

// createStudy creates a study (POST /admin/studies).
func (s *Server) createStudy(w http.ResponseWriter, r *http.Request) error {
	in, d, t, err := studyInput(r)
	if err != nil {
		return err
	}
	var st study.Study
	var af armsForm
	excluded := r.PostForm.Get("exclude_studies")
	overrides, err := readLanguage(r.PostForm, &in, nil)
	if err == nil {
		err = t.err
	}
	if err == nil {
		in.DesignConfig, err = s.designConfig(r.Context(), 0, in.Design, d)
	}
	if err == nil {
		af, err = readArms(d, &in)
	}
	if err == nil {
		in.ExcludeStudies, err = s.excludedStudies(r.Context(), excluded, 0)
	}
	if err == nil {
		st, err = s.store.CreateStudy(r.Context(), in)
		err = af.armsStoreErr(err)
	}
	if err == nil {
		err = s.ownStudy(r.Context(), st)
	}
	if formError(err) {
		v := s.studyForm(true, "/admin/studies", in, d.picks, excluded, t, typedArms(d), false, userMessage(err))
		v.TextOverrides = overrides
		return s.render(w, r, http.StatusUnprocessableEntity, templates.StudyFormPage(v))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug, http.StatusSeeOther)
	return nil
}
