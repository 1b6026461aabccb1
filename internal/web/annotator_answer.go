package web

import (
	"net/http"
	"strconv"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// nextQuestionHeader, sent by app.js with the question form, asks the
// answer's reply to be the next question's page itself.
const nextQuestionHeader = "X-Closer-Next"

// answer stores the participant's answer from the question form and sends
// them to the next question (POST /s/{slug}/answer, then 303). A resubmitted
// form (double click, back and submit) stores nothing new. From app.js
// (nextQuestionHeader) the reply is the next question's page, issued in the
// answer's transaction: one round trip per answer, and Content-Location
// names the question page's URL. A plain form keeps the redirect, so that
// reloading the page never posts the form again.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) error {
	st, p, ok, err := s.annotatorParticipant(w, r)
	if !ok || err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	in := study.AnswerInput{QuestionID: r.PostForm.Get("question_id")}
	if in.QuestionID == "" {
		return badRequest("the form has no question_id")
	}
	format := study.MustStudyFormat(st.Format).Format
	switch closer := r.PostForm.Get("closer"); {
	case closer == "skip":
		in.Skip = true // "can't decide"
	case format == study.FormatRank:
		// The rank form's selects, in order: the choices (the store
		// checks them and says what is wrong).
		in.Choices = []int{}
		for _, c := range r.PostForm["choice"] {
			if c == "" {
				continue // a select left empty: too few choices
			}
			i, err := strconv.Atoi(c)
			if err != nil {
				return badRequest("choice must be an item index")
			}
			in.Choices = append(in.Choices, i)
		}
	default:
		if in.Closer, err = strconv.Atoi(closer); err != nil {
			return badRequest("closer must be an item index or skip")
		}
		if format == study.FormatOddOneOut {
			in.Choices = []int{in.Closer} // the item chosen as the odd one
		}
	}
	if v := r.PostForm.Get("response_ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return badRequest("response_ms must be a whole number of milliseconds")
		}
		in.ResponseMS = &ms
	}
	if v := r.PostForm.Get("listen_ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return badRequest("listen_ms must be a whole number of milliseconds")
		}
		if in.ListenMS, err = listenMS(&ms); err != nil {
			return err
		}
	}
	var pr study.Progress
	if r.Header.Get(nextQuestionHeader) != "" {
		_, pr, err = s.store.AnswerNext(r.Context(), p.ID, in)
	} else {
		_, err = s.store.Answer(r.Context(), p.ID, in)
	}
	switch collect.KindOf(err) {
	case 0:
		if err != nil {
			return err
		}
	case study.KindConflict:
		l := s.studyTexts(r, st)
		n := notice(l, http.StatusConflict, l.T(i18n.AlreadyT), l.T(i18n.Already))
		n.LinkURL, n.LinkText = participantPath(st, pageToken(r, st), "/q"), l.T(i18n.ContinueButton)
		return s.render(w, r, http.StatusConflict, templates.NoticePage(n))
	case study.KindNotOpen:
		l := s.studyTexts(r, st)
		return s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(l, st)))
	default:
		return err
	}
	if pr.Question != nil {
		w.Header().Set("Content-Location", participantPath(st, pageToken(r, st), "/q"))
		return s.renderQuestion(w, r, st, pr, p.Preview)
	}
	http.Redirect(w, r, participantPath(st, pageToken(r, st), "/q"), http.StatusSeeOther)
	return nil
}
