package http

import (
	"net/http"
	"strconv"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// answer stores the participant's answer from the question form and sends
// them to the next question (POST /s/{slug}/answer, then 303). A resubmitted
// form (double click, back and submit) stores nothing new.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) error {
	st, p, ok, err := s.annotatorParticipant(w, r)
	if !ok || err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	in := collect.AnswerInput{QuestionID: r.PostForm.Get("question_id")}
	if in.QuestionID == "" {
		return badRequest("the form has no question_id")
	}
	in.Closer, err = strconv.Atoi(r.PostForm.Get("closer"))
	if err != nil {
		return badRequest("closer must be an item index")
	}
	if v := r.PostForm.Get("response_ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return badRequest("response_ms must be a whole number of milliseconds")
		}
		in.ResponseMS = &ms
	}
	_, err = s.store.Answer(r.Context(), p.ID, in)
	switch collect.KindOf(err) {
	case 0:
		if err != nil {
			return err
		}
	case collect.KindConflict:
		return s.render(w, r, http.StatusConflict, templates.NoticePage(templates.Notice{
			Title:   "Already answered",
			Message: "You already answered this question with the other image; your first answer counts.",
			LinkURL: "/s/" + st.Slug + "/q", LinkText: "Continue",
		}))
	case collect.KindNotOpen:
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
	default:
		return err
	}
	http.Redirect(w, r, "/s/"+st.Slug+"/q", http.StatusSeeOther)
	return nil
}
