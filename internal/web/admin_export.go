package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

// exportCSV streams a study's triplets.csv to a logged-in researcher
// (GET /admin/studies/{slug}/triplets.csv).
func (s *Server) exportCSV(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	return s.streamCSV(w, r, st)
}

// streamCSV writes the export as the response, row by row as PostgreSQL
// returns them (the routes carry no timeout).
func (s *Server) streamCSV(w http.ResponseWriter, r *http.Request, st study.Study) error {
	includeExcluded := r.URL.Query().Get("include_excluded") == "1"
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Catch and repeat trials and skipped questions only on request
	// (?all_answers=1): triplets.csv holds triplets.
	if r.URL.Query().Get("all_answers") == "1" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+st.Slug+`-all-answers.csv"`)
		return s.store.ExportAllAnswersCSV(r.Context(), st.ID, w, includeExcluded)
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+st.Slug+`-triplets.csv"`)
	// Excluded participants' answers only on request (?include_excluded=1).
	return s.store.ExportCSVWith(r.Context(), st.ID, w, includeExcluded)
}
