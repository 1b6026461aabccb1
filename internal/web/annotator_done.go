package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// done shows the debrief and the completion code (GET /s/{slug}/done). On
// a platform the participant goes back to it with the code: to Prolific or
// the generic return address by a link, on MTurk by a form that submits
// the assignment with the code to turkSubmitTo.
func (s *Server) done(w http.ResponseWriter, r *http.Request) error {
	st, p, pr, ok, err := s.annotatorProgress(w, r)
	if !ok || err != nil {
		return err
	}
	if !pr.Done {
		http.Redirect(w, r, participantPath(st, pageToken(r, st), "/q"), http.StatusSeeOther)
		return nil
	}
	if p.Preview {
		// A preview goes back to the study's page, never to the platform.
		return s.render(w, r, http.StatusOK, templates.DonePage(templates.Done{Study: st, Debrief: s.texts.render(st.Debrief),
			CompletionCode: pr.CompletionCode, Answered: pr.Answered, Preview: true}))
	}
	if st.Platform.Kind == study.PlatformMTurk {
		v := templates.Done{Study: st, Debrief: s.texts.render(st.Debrief), CompletionCode: pr.CompletionCode, Answered: pr.Answered,
			L: s.studyTexts(r, st)}
		params, err := s.store.ParticipantPlatformParams(r.Context(), p.ID)
		if err != nil {
			return err
		}
		// Checked at the start; checked again in case the allowed origins changed since.
		if submit, ok := s.mturkSubmitURL(params["turkSubmitTo"]); ok && params["assignmentId"] != "" {
			v.MTurkSubmitURL, v.AssignmentID = submit, params["assignmentId"]
		}
		return s.render(w, r, http.StatusOK, templates.DonePage(v))
	}
	return s.renderDone(w, r, st, pr.CompletionCode, pr.Answered, p.ExternalID)
}

// renderDone shows the debrief, the completion code and the way back to
// the platform (not MTurk's, whose assignment done submits) of a
// participant who finished.
func (s *Server) renderDone(w http.ResponseWriter, r *http.Request, st study.Study, code string, answered int, externalID string) error {
	v := templates.Done{Study: st, Debrief: s.texts.render(st.Debrief), CompletionCode: code, Answered: answered, L: s.studyTexts(r, st)}
	v.ReturnURL = st.Platform.ReturnLink(code, externalID)
	if v.ReturnURL != "" {
		v.ReturnTo = v.L.T(i18n.StudySite)
		if st.Platform.Kind == study.PlatformProlific {
			v.ReturnTo = "Prolific"
		}
		// The participant sees their code, then the browser goes back to
		// the platform (Refresh works without JavaScript).
		w.Header().Set("Refresh", "5; url="+v.ReturnURL)
	}
	return s.render(w, r, http.StatusOK, templates.DonePage(v))
}
