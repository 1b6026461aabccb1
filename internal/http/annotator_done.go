package http

import (
	"net/http"

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
	return s.render(w, r, http.StatusOK, templates.DonePage(templates.Done{
		Study: st, Debrief: renderMarkdown(st.Debrief), CompletionCode: pr.CompletionCode, Answered: pr.Answered,
	}))
}
