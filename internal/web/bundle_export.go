package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/studyfile"
)

// exportBundle downloads the study as a bundle (zip) that studyfile.ImportBundle
// restores (GET /admin/studies/{slug}/bundle.zip).
func (s *Server) exportBundle(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+st.Slug+`-bundle.zip"`)
	w.Header().Set("Cache-Control", "no-store")
	return studyfile.ExportBundle(r.Context(), s.store, st.ID, w)
}
