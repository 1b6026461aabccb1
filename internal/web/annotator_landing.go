package web

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// markdownHeadingRE matches a text that begins with a Markdown ATX heading.
var markdownHeadingRE = regexp.MustCompile(`^#{1,6}(\s|$)`)

// landing shows a study's instructions and the Start button (GET /s/{slug}).
func (s *Server) landing(w http.ResponseWriter, r *http.Request) error {
	st, err := s.annotatorStudy(w, r)
	if err != nil {
		return err
	}
	l := s.studyTexts(r, st)
	if st.Status != study.StatusOpen {
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(l, st)))
	}
	if st.Platform.Kind == study.PlatformMTurk {
		q := r.URL.Query()
		if isMTurkPreview(q.Get("assignmentId")) {
			return s.mturkPreview(w, r, st)
		}
		if err := s.checkMTurkAssignment(q.Get("workerId"), q.Get("assignmentId"), q.Get("hitId"), q.Get("turkSubmitTo")); err != nil {
			return err
		}
	}
	p, ok, err := s.browserParticipant(r, st)
	if err != nil {
		return err
	}
	ext := externalID(r, st.Platform)
	resume := ok && (ext == "" || ext == p.ExternalID)
	var back *study.Returning
	if !resume && ext != "" && st.Platform.Kind != study.PlatformMTurk {
		// Someone who joined with this platform id before, in another
		// browser or before their cookie was lost, is shown where they
		// are, never the first page and its consent again (MTurk's
		// workers resume by their assignment, at the start).
		b, known, err := s.store.Returning(r.Context(), st.ID, ext)
		if err != nil {
			return err
		}
		if known && b.Done {
			return s.renderDone(w, r, st, b.CompletionCode, b.Answered, ext)
		}
		if known {
			resume, back = true, &b
		}
	}
	var params []templates.Param
	kept := map[string]string{}
	for _, k := range st.Platform.KeptParams() {
		if v := r.URL.Query().Get(k); v != "" {
			params = append(params, templates.Param{Name: k, Value: v})
			kept[k] = v
		}
	}
	if !resume {
		// A platform's study is joined with the platform's id only (a
		// browser that holds a participant of it resumes them).
		if ext == "" && st.Platform.RequiresID() {
			return s.render(w, r, http.StatusBadRequest, templates.NoticePage(missingIDNotice(l, st)))
		}
		// Turned away before reading the instructions, not after.
		switch err := s.store.CanJoin(r.Context(), st, ext, kept); {
		case errors.Is(err, collect.ErrCompletedOtherAssignment):
			return s.render(w, r, http.StatusConflict, templates.NoticePage(completedOtherHITNotice(l)))
		case collect.KindOf(err) == study.KindFull:
			return s.render(w, r, http.StatusOK, templates.NoticePage(fullNotice(l, st)))
		case collect.KindOf(err) == study.KindForbidden:
			return s.render(w, r, http.StatusForbidden, templates.NoticePage(tookPartNotice(l, st)))
		case err != nil:
			return err
		}
	}
	v := templates.Landing{Study: st, Instructions: s.texts.render(st.Instructions), ExternalID: ext, Params: params, Resume: resume, Back: back, L: l}
	if st.Consent != "" && !resume {
		v.Consent = s.texts.render(st.Consent)
		v.ConsentTitled = markdownHeadingRE.MatchString(strings.TrimSpace(st.Consent))
	}
	return s.render(w, r, http.StatusOK, templates.LandingPage(v))
}

// declined ends the visit of someone who did not agree to the study's
// consent (GET /s/{slug}/declined): nothing is stored, and on a platform
// they are pointed back to it.
func (s *Server) declined(w http.ResponseWriter, r *http.Request) error {
	st, err := s.annotatorStudy(w, r)
	if err != nil {
		return err
	}
	l := s.studyTexts(r, st)
	n := notice(l, 0, l.T(i18n.DeclinedTitle), l.T(i18n.DeclinedText))
	switch st.Platform.Kind {
	case study.PlatformProlific:
		n.Message = l.T(i18n.DeclinedProl)
		n.LinkURL, n.LinkText = "https://app.prolific.com/", l.T(i18n.BackToProlific)
	case study.PlatformMTurk:
		// The page is in MTurk's frame, and MTurk has no address to send
		// a worker back to: the way back is MTurk's own Return button.
		n.Message = l.T(i18n.DeclinedMTurk)
	case study.PlatformGeneric:
		if st.Platform.ReturnURL != "" {
			n.Message = l.T(i18n.DeclinedShort)
			n.LinkURL, n.LinkText = st.Platform.ReturnLink("", ""), l.T(i18n.BackToSite)
		}
	}
	return s.render(w, r, http.StatusOK, templates.NoticePage(n))
}
