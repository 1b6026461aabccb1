package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// historyLimit is how many audit entries a study's history page shows.
const historyLimit = 500

// studyHistory shows the study's audit trail (GET
// /admin/studies/{slug}/history; issue 30), the addresses to owners only.
func (s *Server) studyHistory(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	es, err := s.accounts.StudyHistory(r.Context(), st.ID, historyLimit)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.HistoryPage(templates.History{
		Study: st, Entries: es, Limit: historyLimit, ShowAddress: roleFrom(r.Context()) >= study.RoleOwner}))
}
