package web

import (
	"net/http"
)

// apiExport streams a study's triplets.csv to a script holding an API
// token that may read the study (GET /api/v1/studies/{slug}/triplets.csv;
// requireToken and authorize check it).
func (s *Server) apiExport(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	return s.streamCSV(w, r, st)
}
