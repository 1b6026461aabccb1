package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// excludeParticipant excludes a participant of the study or includes them
// again (POST /admin/studies/{slug}/participants/{participant}/exclude with
// excluded=1 or 0). Their answers are kept.
func (s *Server) excludeParticipant(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	var excluded bool
	switch r.PostFormValue("excluded") {
	case "1":
		excluded = true
	case "0":
	default:
		return badRequest("excluded must be 1 or 0")
	}
	if err := s.store.SetExcluded(r.Context(), st.ID, chi.URLParam(r, "participant"), excluded); err != nil {
		return err
	}
	msg := "included"
	if excluded {
		msg = "excluded"
	}
	return s.toDashboard(w, r, st.Slug, msg, "#participants")
}
