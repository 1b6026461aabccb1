package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// done shows the debrief and the completion code (GET /s/{slug}/done).
func (s *Server) done(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	p, ok, err := s.cookieParticipant(r, st)
	if err != nil {
		return err
	}
	if !ok {
		http.Redirect(w, r, "/s/"+st.Slug, http.StatusSeeOther)
		return nil
	}
	pr, err := s.store.Next(r.Context(), p.ID)
	if collect.KindOf(err) == collect.KindNotOpen {
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
	}
	if err != nil {
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
