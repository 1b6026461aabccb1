package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// landing shows a study's instructions and the Start button (GET /s/{slug}).
func (s *Server) landing(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if st.Status != collect.StatusOpen {
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
	}
	p, ok, err := s.cookieParticipant(r, st)
	if err != nil {
		return err
	}
	ext := externalID(r)
	resume := ok && (ext == "" || ext == p.ExternalID)
	return s.render(w, r, http.StatusOK, templates.LandingPage(templates.Landing{
		Study: st, Instructions: renderMarkdown(st.Instructions), ExternalID: ext, Resume: resume,
	}))
}
