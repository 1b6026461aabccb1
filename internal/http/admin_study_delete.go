package http

import "net/http"

// deleteStudy deletes a study after the confirmation box was ticked
// (POST /admin/studies/{slug}/delete).
func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	if r.PostForm.Get("confirm") != "yes" {
		return &httpError{status: http.StatusUnprocessableEntity, msg: "tick the box to confirm the deletion"}
	}
	if err := s.store.DeleteStudy(r.Context(), st.ID); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
	return nil
}
