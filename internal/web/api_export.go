package web

import (
	"net/http"
)

// apiExport streams a study's triplets.csv to a script holding an admin API
// token (GET /api/v1/studies/{slug}/triplets.csv).
func (s *Server) apiExport(w http.ResponseWriter, r *http.Request) error {
	token, ok := bearer(r)
	if !ok {
		return unauthorized("send an admin API token as Authorization: Bearer <token>")
	}
	if _, err := s.accounts.APITokenAdmin(r.Context(), token); err != nil {
		return err
	}
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	return s.streamCSV(w, r, st)
}
