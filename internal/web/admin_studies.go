package web

import (
	"net/http"

	"github.com/closer-lab/closer/templates"
)

// studies lists the studies the account may see (issue 30) with their counts, each whose participant
// limit is taken marked full (GET /admin).
func (s *Server) studies(w http.ResponseWriter, r *http.Request) error {
	sts, err := s.store.ListStudies(r.Context())
	if err != nil {
		return err
	}
	if sts, err = s.visibleOnly(r.Context(), sts); err != nil {
		return err
	}
	if err := s.store.MarkFull(r.Context(), sts); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.StudiesPage(sts))
}
