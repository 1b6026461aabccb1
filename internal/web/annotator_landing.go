package web

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
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
	if st.Status != study.StatusOpen {
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
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
			return s.render(w, r, http.StatusBadRequest, templates.NoticePage(missingIDNotice(st)))
		}
		// Turned away before reading the instructions, not after.
		switch err := s.store.CanJoin(r.Context(), st, ext, kept); {
		case errors.Is(err, collect.ErrCompletedOtherAssignment):
			return s.render(w, r, http.StatusConflict, templates.NoticePage(completedOtherHITNotice()))
		case collect.KindOf(err) == study.KindFull:
			return s.render(w, r, http.StatusOK, templates.NoticePage(fullNotice(st)))
		case collect.KindOf(err) == study.KindForbidden:
			return s.render(w, r, http.StatusForbidden, templates.NoticePage(tookPartNotice(st)))
		case err != nil:
			return err
		}
	}
	v := templates.Landing{Study: st, Instructions: s.texts.render(st.Instructions), ExternalID: ext, Params: params, Resume: resume, Back: back}
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
	n := templates.Notice{Title: "You chose not to take part",
		Message: "Nothing about you was stored. You can close this page."}
	switch st.Platform.Kind {
	case study.PlatformProlific:
		n.Message = "Nothing about you was stored. Please return the study on Prolific (\"Stop without completing\")."
		n.LinkURL, n.LinkText = "https://app.prolific.com/", "Back to Prolific"
	case study.PlatformMTurk:
		// The page is in MTurk's frame, and MTurk has no address to send
		// a worker back to: the way back is MTurk's own Return button.
		n.Message = "Nothing about you was stored. Please return the HIT: use the Return button on MTurk's page, outside this frame. " +
			"There is nothing to submit, and returning it lets another worker take it."
	case study.PlatformGeneric:
		if st.Platform.ReturnURL != "" {
			n.Message = "Nothing about you was stored."
			n.LinkURL, n.LinkText = st.Platform.ReturnLink("", ""), "Back to the study's site"
		}
	}
	return s.render(w, r, http.StatusOK, templates.NoticePage(n))
}
