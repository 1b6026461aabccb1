package web

import (
	"net/http"
	"strings"
)

// apiCreateParticipant joins a study (POST /api/v1/studies/{slug}/participants,
// optional body {"external_id": "..."}) → 201 {"participant_id", "token"}.
// An external id that joined before resumes its participant: 200 with the
// same participant_id, a new token and "resumed": true. A study on a
// recruiting platform takes only joins with an external_id (400 without).
// Joins are limited per client address (limitJoins: 429 with Retry-After).
func (s *Server) apiCreateParticipant(w http.ResponseWriter, r *http.Request) error {
	// Limited before anything is read, so a flood past the limit costs
	// no query.
	if err := s.limitJoins(w, r); err != nil {
		return err
	}
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	var body struct {
		ExternalID string `json:"external_id"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	if strings.TrimSpace(body.ExternalID) == "" && st.Platform.RequiresID() {
		return badRequest(missingIDMessage(st))
	}
	p, token, err := s.store.CreateParticipant(r.Context(), st.ID, body.ExternalID, nil)
	if err != nil {
		return err
	}
	if p.Resumed {
		return writeJSON(w, http.StatusOK, map[string]any{"participant_id": p.PublicID, "token": token, "resumed": true})
	}
	return writeJSON(w, http.StatusCreated, map[string]string{"participant_id": p.PublicID, "token": token})
}
