package http

import (
	"net/http"

	"github.com/closer-lab/closer/templates"
)

// studies lists the studies (GET /admin).
func (s *Server) studies(w http.ResponseWriter, r *http.Request) error {
	sts, err := s.store.ListStudies(r.Context())
	if err != nil {
		return err
	}
	rows := make([]templates.StudyRow, len(sts))
	for i, st := range sts {
		stats, err := s.store.StudyStats(r.Context(), st.ID)
		if err != nil {
			return err
		}
		rows[i] = templates.StudyRow{Study: st, Stats: stats}
	}
	return s.render(w, r, http.StatusOK, templates.StudiesPage(rows))
}
