package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

// apiAnswer stores an answer (POST /api/v1/answers, body {"question_id",
// "closer", "response_ms", "listen_ms", "next"}, or "skip": true instead of "closer" for
// "can't decide" where the study offers it) → 201 {"ok": true}; the same answer
// again → 200. With "next": true the reply also carries the participant's
// next question, issued in the answer's own transaction: "next" is the
// body GET …/next would return ({"question_id", …} or {"done": true,
// "completion_code"}), or null while the study is paused. One round trip
// per answer instead of two. Errors: 400 malformed body, 401 no token, 403
// another participant's question, 404 unknown question, 409 answered
// differently, 422 closer not an option. Nothing is stored on any error.
func (s *Server) apiAnswer(w http.ResponseWriter, r *http.Request) error {
	p, err := s.apiParticipant(r)
	if err != nil {
		return err
	}
	var body struct {
		QuestionID *string `json:"question_id"`
		Closer     *int    `json:"closer"`
		Choices    []int   `json:"choices"`
		Skip       bool    `json:"skip"`
		ResponseMS *int    `json:"response_ms"`
		ListenMS   *int    `json:"listen_ms"` // optional: ms any sound of the question played (issue 29)
		Next       bool    `json:"next"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	if body.QuestionID == nil || *body.QuestionID == "" {
		return badRequest("question_id is missing")
	}
	in := study.AnswerInput{QuestionID: *body.QuestionID, Skip: body.Skip, ResponseMS: body.ResponseMS, Choices: body.Choices}
	if in.ListenMS, err = listenMS(body.ListenMS); err != nil {
		return err
	}
	switch {
	case body.Skip && (body.Closer != nil || body.Choices != nil):
		return badRequest("send either closer (or choices) or skip, not both")
	case body.Closer != nil && body.Choices != nil:
		return badRequest("send either closer or choices, not both")
	case !body.Skip && body.Closer == nil && body.Choices == nil:
		return badRequest("closer (or choices) is missing")
	case body.Closer != nil:
		in.Closer = *body.Closer
	}
	if !body.Next {
		created, err := s.store.Answer(r.Context(), p.ID, in)
		if err != nil {
			return err
		}
		return writeJSON(w, answerStatus(created), map[string]bool{"ok": true})
	}
	created, pr, err := s.store.AnswerNext(r.Context(), p.ID, in)
	if err != nil {
		return err
	}
	reply := struct {
		OK   bool `json:"ok"`
		Next any  `json:"next"`
	}{OK: true}
	if pr.Done || pr.Question != nil {
		reply.Next = s.apiProgress(pr)
	}
	return writeJSON(w, answerStatus(created), reply)
}

// answerStatus is 201 for a new answer, 200 for the same one again.
func answerStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// listenMS checks a reported listening time (nil: not reported, stored as
// unknown): out of study.CheckListenMS's bounds is a bad request (400),
// refused before anything is stored.
func listenMS(ms *int) (*int, error) {
	if ms == nil {
		return nil, nil
	}
	if err := study.CheckListenMS(*ms); err != nil {
		return nil, badRequest(err.Error())
	}
	return ms, nil
}
