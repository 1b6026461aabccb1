package http

import "net/http"

// exportBundle downloads the study as a bundle (zip) that ImportBundle
// restores (GET /admin/studies/{slug}/bundle.zip).
func (s *Server) exportBundle(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+st.Slug+`-bundle.zip"`)
	w.Header().Set("Cache-Control", "no-store")
	return s.store.ExportBundle(r.Context(), st.ID, w)
}
