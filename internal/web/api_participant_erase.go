package web

import (
	"net/http"
	"strings"
)

// apiEraseParticipant deletes a participant's data at their request for a
// script holding an API token that may write (POST
// /api/v1/studies/{slug}/participants/erase, body {"id": "<external or
// public id>", "all_studies": false, "dry_run": false}) → 200 {"erased":
// bool, "studies": [{"slug", "participants", "questions", "answers",
// "trial_answers", "votes", "design_answers"}]}. With dry_run nothing is
// deleted: the list says what would be.
func (s *Server) apiEraseParticipant(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	var body struct {
		ID         string `json:"id"`
		AllStudies bool   `json:"all_studies"`
		DryRun     bool   `json:"dry_run"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	id := strings.TrimSpace(body.ID)
	if id == "" {
		return badRequest("give the participant's external or public id as \"id\"")
	}
	studies, err := s.erasureStudies(r.Context(), st, body.AllStudies)
	if err != nil {
		return err
	}
	es, err := s.store.ErasurePreview(r.Context(), studies, id)
	if !body.DryRun && err == nil {
		es, err = s.erase(r.Context(), studies, id)
	} else if err == nil {
		noteAudit(r.Context(), "previewed a participant's deletion", 0, "")
	}
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(es))
	for _, e := range es {
		out = append(out, map[string]any{"slug": e.StudySlug, "participants": e.Participants, "questions": e.Questions,
			"answers": e.Answers, "trial_answers": e.TrialAnswers, "votes": e.Votes, "design_answers": e.DesignAnswers})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"erased": !body.DryRun, "studies": out})
}
