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
// returns them (the routes carry no timeout). Excluded participants'
// answers only on request (?include_excluded=1), and so are preview
// sessions' (?previews=1, with a last column, preview, marking them).
func (s *Server) streamCSV(w http.ResponseWriter, r *http.Request, st study.Study) error {
	q := r.URL.Query()
	o := study.ExportOptions{Excluded: q.Get("include_excluded") == "1", Previews: q.Get("previews") == "1",
		// Catch and repeat trials and skipped questions only on request
		// (?all_answers=1): triplets.csv holds triplets.
		All: q.Get("all_answers") == "1",
		// Identifying columns only for editors and owners (issue 30).
		NoIdentifying: !identifyingFrom(r.Context())}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	name := st.Slug + "-triplets.csv"
	if o.All {
		name = st.Slug + "-all-answers.csv"
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	return s.store.ExportAnswersCSV(r.Context(), st.ID, w, o)
}
