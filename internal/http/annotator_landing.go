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
	ext := externalID(r, st.Platform)
	resume := ok && (ext == "" || ext == p.ExternalID)
	var params []templates.Param
	for _, k := range st.Platform.KeptParams() {
		if v := r.URL.Query().Get(k); v != "" {
			params = append(params, templates.Param{Name: k, Value: v})
		}
	}
	return s.render(w, r, http.StatusOK, templates.LandingPage(templates.Landing{
		Study: st, Instructions: renderMarkdown(st.Instructions), ExternalID: ext, Params: params, Resume: resume,
	}))
}
