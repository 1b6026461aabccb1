package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// start makes the browser a participant of the study, or resumes its
// participant, and sends it to the first question (POST /s/{slug}/start).
// On MTurk the worker's id resumes their participant, and the question
// page's URL carries the new token; a worker who completed the study on
// another assignment is asked to return this HIT instead. A study on a
// platform takes nobody new without the platform's id.
func (s *Server) start(w http.ResponseWriter, r *http.Request) error {
	st, err := s.annotatorStudy(w, r)
	if err != nil {
		return err
	}
	l := s.studyTexts(r, st)
	if st.Status != study.StatusOpen {
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(l, st)))
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	ext := strings.TrimSpace(r.PostForm.Get("external_id"))
	if st.Platform.Kind == study.PlatformMTurk {
		f := r.PostForm
		if err := s.checkMTurkAssignment(ext, f.Get("assignmentId"), f.Get("hitId"), f.Get("turkSubmitTo")); err != nil {
			return err
		}
	}
	p, ok, err := s.browserParticipant(r, st)
	if err != nil {
		return err
	}
	token := pageToken(r, st)
	if !ok || (ext != "" && ext != p.ExternalID) {
		// A platform's study is joined with the platform's id only (a
		// browser that holds a participant of it resumes them above).
		if ext == "" && st.Platform.RequiresID() {
			return s.render(w, r, http.StatusBadRequest, templates.NoticePage(missingIDNotice(l, st)))
		}
		if st.Consent != "" && r.PostForm.Get("consent") != "yes" {
			// One who joined with this id before agreed then (the landing
			// page does not ask them again).
			_, known, err := s.store.Returning(r.Context(), st.ID, ext)
			if err != nil {
				return err
			}
			if !known {
				return s.refuse(http.StatusBadRequest, i18n.NeedConsent)
			}
		}
		if err := s.limitJoins(w, r); err != nil {
			return err
		}
		params := map[string]string{}
		for _, k := range st.Platform.KeptParams() {
			params[k] = r.PostForm.Get(k)
		}
		_, token, err = s.store.CreateParticipant(r.Context(), st.ID, ext, params)
		if errors.Is(err, collect.ErrCompletedOtherAssignment) {
			return s.render(w, r, http.StatusConflict, templates.NoticePage(completedOtherHITNotice(l)))
		}
		if collect.KindOf(err) == study.KindNotOpen {
			return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(l, st)))
		}
		if collect.KindOf(err) == study.KindFull {
			return s.render(w, r, http.StatusOK, templates.NoticePage(fullNotice(l, st)))
		}
		if collect.KindOf(err) == study.KindForbidden {
			return s.render(w, r, http.StatusForbidden, templates.NoticePage(tookPartNotice(l, st)))
		}
		if err != nil {
			return err
		}
		if st.Platform.Kind != study.PlatformMTurk { // MTurk's pages carry the token instead (participantTokenField)
			s.setCookie(w, participantCookie, token, "/s/"+st.Slug, participantCookieTTL)
		}
	}
	http.Redirect(w, r, participantPath(st, token, "/q"), http.StatusSeeOther)
	return nil
}
