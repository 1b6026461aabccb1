package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
)

// apiAnswer stores an answer (POST /api/v1/answers, body {"question_id",
// "closer", "response_ms"}) → 201 {"ok": true}; the same answer again → 200.
// Errors: 400 malformed body, 401 no token, 403 another participant's
// question, 404 unknown question, 409 answered differently, 422 closer not
// an option. Nothing is stored on any error.
func (s *Server) apiAnswer(w http.ResponseWriter, r *http.Request) error {
	p, err := s.apiParticipant(r)
	if err != nil {
		return err
	}
	var body struct {
		QuestionID *string `json:"question_id"`
		Closer     *int    `json:"closer"`
		ResponseMS *int    `json:"response_ms"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	if body.QuestionID == nil || *body.QuestionID == "" {
		return badRequest("question_id is missing")
	}
	if body.Closer == nil {
		return badRequest("closer is missing")
	}
	created, err := s.store.Answer(r.Context(), p.ID, collect.AnswerInput{
		QuestionID: *body.QuestionID, Closer: *body.Closer, ResponseMS: body.ResponseMS,
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, map[string]bool{"ok": true})
}
