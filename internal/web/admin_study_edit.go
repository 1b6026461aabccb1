package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// editStudyForm shows the study's form (GET /admin/studies/{slug}/edit).
func (s *Server) editStudyForm(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, Instructions: st.Instructions, Debrief: st.Debrief, Consent: st.Consent,
		QuestionsPerParticipant: st.QuestionsPerParticipant, Status: st.Status, Design: st.Design, Platform: st.Platform,
		Quota: st.Quota, MinViewMS: st.MinViewMS, Layout: st.Layout, Format: st.Format, MixedKinds: st.MixedKinds, PlayToEnd: st.PlayToEnd, SoundMaxSeconds: st.SoundMaxSeconds, Exclusion: st.Exclusion, Quality: st.Quality,
		Language: st.Language, TextOverrides: st.TextOverrides}
	if in.DesignConfig, err = s.store.DesignConfigOf(r.Context(), st.ID); err != nil {
		return err
	}
	picks := ""
	if len(in.DesignConfig.LandmarkItems) > 0 {
		items, err := s.store.ListItems(r.Context(), st.ID)
		if err != nil {
			return err
		}
		labels := make([]string, len(items))
		for i, it := range items {
			labels[i] = it.Label
		}
		picks = pickedLabels(in.DesignConfig.LandmarkItems, labels)
	}
	excluded, err := s.excludedText(r.Context(), st.ExcludeStudies)
	if err != nil {
		return err
	}
	frozen, err := s.store.QuestionsIssued(r.Context(), st.ID)
	if err != nil {
		return err
	}
	v := s.studyForm(false, "/admin/studies/"+st.Slug, in, picks, excluded,
		trialFormOf(st.Quality), storedArms(st.Arms, st.HeldoutShare), frozen, "")
	v.TextOverrides = i18n.FormatOverrides(st.TextOverrides)
	return s.render(w, r, http.StatusOK, templates.StudyFormPage(v))
}

// updateStudy saves the study's form (POST /admin/studies/{slug}).
func (s *Server) updateStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	in, d, t, err := studyInput(r)
	if err != nil {
		return err
	}
	var updated study.Study
	var af armsForm
	excluded := r.PostForm.Get("exclude_studies")
	if _, ok := r.PostForm["layout"]; !ok {
		in.Layout = st.Layout // a post without the field (a script's) keeps the layout
	}
	if _, ok := r.PostForm["format"]; !ok {
		in.Format = st.Format // so does one without the question format
	}
	overrides, err := readLanguage(r.PostForm, &in, &st)
	if err == nil {
		err = t.err
	}
	if err == nil {
		in.DesignConfig, err = s.designConfig(r.Context(), st.ID, in.Design, d)
	}
	if err == nil {
		af, err = readArms(d, &in)
		// A post without the fields keeps the study's arms and share; the
		// share as shown reads back as the stored one, not a number a
		// rounding away from it (which would count as a change).
		if !d.armsGiven && !d.rowsGiven {
			in.Arms, af = st.Arms, armsForm{}
		}
		if !d.heldoutGiven || d.heldout == heldoutText(st.HeldoutShare) {
			in.HeldoutShare = st.HeldoutShare
		}
	}
	if err == nil {
		in.ExcludeStudies, err = s.excludedStudies(r.Context(), excluded, st.ID)
	}
	if err == nil {
		updated, err = s.store.UpdateStudy(r.Context(), st.ID, in)
		err = af.armsStoreErr(err)
	}
	if formError(err) {
		frozen, ferr := s.store.QuestionsIssued(r.Context(), st.ID)
		if ferr != nil {
			return ferr
		}
		v := s.studyForm(false, "/admin/studies/"+st.Slug, in, d.picks, excluded, t, typedArms(d), frozen, userMessage(err))
		v.TextOverrides = overrides
		return s.render(w, r, http.StatusUnprocessableEntity, templates.StudyFormPage(v))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+updated.Slug+"?msg=saved", http.StatusSeeOther)
	return nil
}
