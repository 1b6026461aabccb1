package web

import "net/http"

// exportTrials sends an odd-one-out or rank study's trials.csv, the
// format's own trial file (issue 27), to a logged-in researcher
// (GET /admin/studies/{slug}/trials.csv; ?include_excluded=1 with the
// excluded participants' trials).
func (s *Server) exportTrials(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="`+st.Slug+`-trials.csv"`)
	return s.store.ExportTrialsCSV(r.Context(), st.ID, w, r.URL.Query().Get("include_excluded") == "1")
}
