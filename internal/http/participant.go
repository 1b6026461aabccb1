package http

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// participantCookie holds an annotator's participant token, scoped to the
// study's path /s/{slug}.
const participantCookie = "closer_participant"

// participantCookieTTL is how long a browser keeps its participant.
const participantCookieTTL = 30 * 24 * time.Hour

// studyFromURL loads the study named by the {slug} URL parameter.
func (s *Server) studyFromURL(r *http.Request) (collect.Study, error) {
	return s.store.StudyBySlug(r.Context(), chi.URLParam(r, "slug"))
}

// cookieParticipant returns the browser's participant of study st, if any.
func (s *Server) cookieParticipant(r *http.Request, st collect.Study) (collect.Participant, bool, error) {
	c, err := r.Cookie(participantCookie)
	if err != nil || c.Value == "" {
		return collect.Participant{}, false, nil
	}
	p, err := s.store.AuthenticateParticipant(r.Context(), c.Value)
	if collect.KindOf(err) == collect.KindUnauthorized {
		return collect.Participant{}, false, nil
	}
	if err != nil {
		return collect.Participant{}, false, err
	}
	if p.StudyID != st.ID {
		return collect.Participant{}, false, nil
	}
	return p, true, nil
}

// annotatorParticipant returns the study of the URL and the browser's
// participant of it. A browser without one is sent to the study's start page
// and ok is false: the response is written.
func (s *Server) annotatorParticipant(w http.ResponseWriter, r *http.Request) (st collect.Study, p collect.Participant, ok bool, err error) {
	st, err = s.studyFromURL(r)
	if err != nil {
		return st, p, false, err
	}
	p, ok, err = s.cookieParticipant(r, st)
	if err != nil {
		return st, p, false, err
	}
	if !ok {
		http.Redirect(w, r, "/s/"+st.Slug, http.StatusSeeOther)
	}
	return st, p, ok, nil
}

// annotatorProgress is annotatorParticipant followed by the participant's
// progress, issuing their next question if they hold none. A study that
// takes no answers now shows its notice, and ok is false.
func (s *Server) annotatorProgress(w http.ResponseWriter, r *http.Request) (collect.Study, collect.Progress, bool, error) {
	st, p, ok, err := s.annotatorParticipant(w, r)
	if !ok || err != nil {
		return st, collect.Progress{}, false, err
	}
	pr, err := s.store.Next(r.Context(), p.ID)
	if collect.KindOf(err) == collect.KindNotOpen {
		return st, pr, false, s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
	}
	if collect.KindOf(err) == collect.KindUnauthorized { // the participant is gone: start again
		http.Redirect(w, r, "/s/"+st.Slug, http.StatusSeeOther)
		return st, pr, false, nil
	}
	if err != nil {
		return st, pr, false, err
	}
	return st, pr, true, nil
}

// externalID returns the participant identity a recruiting platform put in
// the URL: the study's platform's parameter (collect.Platform.IDParams).
func externalID(r *http.Request, pl collect.Platform) string {
	q := r.URL.Query()
	for _, k := range pl.IDParams() {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// fullNotice is the page of a study whose quota is taken.
func fullNotice(st collect.Study) templates.Notice {
	n := templates.Notice{Title: st.Title + " is full",
		Message: "Enough people are taking part in this study already, so it cannot take you. Thank you for your interest!"}
	if st.Platform.Kind == collect.PlatformProlific {
		n.Message = "Enough people are taking part in this study already. Please return it on Prolific (\"Stop without completing\"); nothing about you was stored."
		n.LinkURL, n.LinkText = "https://app.prolific.com/", "Back to Prolific"
	}
	return n
}

// tookPartNotice is the page of someone a study refuses because they took
// part in a related study.
func tookPartNotice(st collect.Study) templates.Notice {
	n := templates.Notice{Title: "You took part in a related study", Status: http.StatusForbidden,
		Message: "This study is for people who have not seen its images before, and you took part in a related study. Thank you for your interest! Nothing about you was stored."}
	if st.Platform.Kind == collect.PlatformProlific {
		n.Message += " Please return this study on Prolific (\"Stop without completing\")."
		n.LinkURL, n.LinkText = "https://app.prolific.com/", "Back to Prolific"
	}
	return n
}

// notOpenNotice is the friendly page of a study that takes no answers now.
func notOpenNotice(st collect.Study) templates.Notice {
	switch st.Status {
	case collect.StatusPaused:
		return templates.Notice{Title: st.Title + " is paused",
			Message: "The researchers paused this study for a moment. Please come back a little later; your progress is kept."}
	case collect.StatusClosed:
		return templates.Notice{Title: st.Title + " is closed",
			Message: "This study has finished collecting answers. Thank you for your interest!"}
	default:
		return templates.Notice{Title: "Not open yet",
			Message: "This study is not open yet. Please check the link you were given, or come back later."}
	}
}
