package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// done shows the debrief and the completion code (GET /s/{slug}/done).
func (s *Server) done(w http.ResponseWriter, r *http.Request) error {
	st, pr, ok, err := s.annotatorProgress(w, r)
	if !ok || err != nil {
		return err
	}
	if !pr.Done {
		http.Redirect(w, r, "/s/"+st.Slug+"/q", http.StatusSeeOther)
		return nil
	}
	v := templates.Done{Study: st, Debrief: renderMarkdown(st.Debrief), CompletionCode: pr.CompletionCode, Answered: pr.Answered}
	if p, ok, err := s.cookieParticipant(r, st); err != nil {
		return err
	} else if ok {
		v.ReturnURL = st.Platform.ReturnLink(pr.CompletionCode, p.ExternalID)
	}
	if v.ReturnURL != "" {
		v.ReturnTo = "the study's site"
		if st.Platform.Kind == collect.PlatformProlific {
			v.ReturnTo = "Prolific"
		}
		// The participant sees their code, then the browser goes back to
		// the platform (Refresh works without JavaScript).
		w.Header().Set("Refresh", "5; url="+v.ReturnURL)
	}
	return s.render(w, r, http.StatusOK, templates.DonePage(v))
}
