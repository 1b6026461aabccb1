package web

import (
	"net/http"
)

// apiSetStatus opens, pauses or closes a study for a script holding an API
// token that may write in it (POST /api/v1/studies/{slug}/status, body
// {"status": "open" | "paused" | "closed"}) → 200 {"slug", "status"}.
func (s *Server) apiSetStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	var body struct {
		Status string `json:"status"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	switch body.Status {
	case "open", "paused", "closed":
	default:
		return badRequest("status must be open, paused or closed")
	}
	if err := s.store.SetStudyStatus(r.Context(), st.ID, body.Status); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"slug": st.Slug, "status": body.Status})
}
