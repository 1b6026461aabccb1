package http

import (
	"net/http"
	"net/url"
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

// participantTokenField carries an MTurk participant's token in the URLs
// and forms of their pages. MTurk shows the study in an iframe of its own
// site, where the participant cookie is a third-party cookie that browsers
// may block (SameSite, third-party cookie rules); the token in the page
// needs no cookie. Other studies use the cookie only.
const participantTokenField = "participant_token"

// maxTokenLen bounds a participant token read from a page.
const maxTokenLen = 100

// studyFromURL loads the study named by the {slug} URL parameter.
func (s *Server) studyFromURL(r *http.Request) (collect.Study, error) {
	return s.store.StudyBySlug(r.Context(), chi.URLParam(r, "slug"))
}

// annotatorStudy loads the study of an annotator page; an MTurk study's
// pages may be framed by MTurk.
func (s *Server) annotatorStudy(w http.ResponseWriter, r *http.Request) (collect.Study, error) {
	st, err := s.studyFromURL(r)
	if err == nil && st.Platform.Kind == collect.PlatformMTurk {
		s.allowMTurkFraming(w)
	}
	return st, err
}

// pageToken returns the participant token an MTurk study's page carried
// (participantTokenField in the URL or the form); "" for other studies.
func pageToken(r *http.Request, st collect.Study) string {
	if st.Platform.Kind != collect.PlatformMTurk {
		return ""
	}
	if t := r.FormValue(participantTokenField); len(t) <= maxTokenLen {
		return t
	}
	return ""
}

// participantPath is the path of one of study st's annotator pages (page
// "/q", "/done"); an MTurk study's carries the participant token.
func participantPath(st collect.Study, token, page string) string {
	path := "/s/" + st.Slug + page
	if st.Platform.Kind == collect.PlatformMTurk && token != "" {
		path += "?" + participantTokenField + "=" + url.QueryEscape(token)
	}
	return path
}

// browserParticipant returns the browser's participant of study st, if
// any: by the page's token on an MTurk study, by the cookie otherwise.
func (s *Server) browserParticipant(r *http.Request, st collect.Study) (collect.Participant, bool, error) {
	token := pageToken(r, st)
	if st.Platform.Kind != collect.PlatformMTurk {
		c, err := r.Cookie(participantCookie)
		if err != nil {
			return collect.Participant{}, false, nil
		}
		token = c.Value
	}
	if token == "" {
		return collect.Participant{}, false, nil
	}
	p, err := s.store.AuthenticateParticipant(r.Context(), token)
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

// noParticipant answers a question, answer or done page of a browser
// without a participant of st: back to the study's start page, or on
// MTurk (whose start page needs MTurk's link) a page asking to open the
// HIT again.
func (s *Server) noParticipant(w http.ResponseWriter, r *http.Request, st collect.Study) error {
	if st.Platform.Kind == collect.PlatformMTurk {
		return s.render(w, r, http.StatusUnauthorized, templates.NoticePage(templates.Notice{
			Title: "Please open the HIT again", Status: http.StatusUnauthorized,
			Message: "This page no longer knows who you are. Open the HIT again from MTurk: you continue where you left off."}))
	}
	http.Redirect(w, r, "/s/"+st.Slug, http.StatusSeeOther)
	return nil
}

// annotatorParticipant returns the study of the URL and the browser's
// participant of it. A browser without one is answered by noParticipant
// and ok is false: the response is written.
func (s *Server) annotatorParticipant(w http.ResponseWriter, r *http.Request) (st collect.Study, p collect.Participant, ok bool, err error) {
	st, err = s.annotatorStudy(w, r)
	if err != nil {
		return st, p, false, err
	}
	p, ok, err = s.browserParticipant(r, st)
	if err != nil {
		return st, p, false, err
	}
	if !ok {
		return st, p, false, s.noParticipant(w, r, st)
	}
	return st, p, ok, nil
}

// annotatorProgress is annotatorParticipant followed by the participant's
// progress, issuing their next question if they hold none. A study that
// takes no answers now shows its notice, and ok is false.
func (s *Server) annotatorProgress(w http.ResponseWriter, r *http.Request) (collect.Study, collect.Participant, collect.Progress, bool, error) {
	st, p, ok, err := s.annotatorParticipant(w, r)
	if !ok || err != nil {
		return st, p, collect.Progress{}, false, err
	}
	pr, err := s.store.Next(r.Context(), p.ID)
	if collect.KindOf(err) == collect.KindNotOpen {
		return st, p, pr, false, s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(st)))
	}
	if collect.KindOf(err) == collect.KindUnauthorized { // the participant is gone: start again
		return st, p, pr, false, s.noParticipant(w, r, st)
	}
	if err != nil {
		return st, p, pr, false, err
	}
	return st, p, pr, true, nil
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
	switch st.Platform.Kind {
	case collect.PlatformProlific:
		n.Message = "Enough people are taking part in this study already. Please return it on Prolific (\"Stop without completing\"); nothing about you was stored."
		n.LinkURL, n.LinkText = "https://app.prolific.com/", "Back to Prolific"
	case collect.PlatformMTurk:
		n.Message = "Enough people are taking part in this study already. Please return the HIT on MTurk (\"Return\"); nothing about you was stored."
	}
	return n
}

// tookPartNotice is the page of someone a study refuses because they took
// part in a related study.
func tookPartNotice(st collect.Study) templates.Notice {
	n := templates.Notice{Title: "You took part in a related study", Status: http.StatusForbidden,
		Message: "This study is for people who have not seen its images before, and you took part in a related study. Thank you for your interest! Nothing about you was stored."}
	switch st.Platform.Kind {
	case collect.PlatformProlific:
		n.Message += " Please return this study on Prolific (\"Stop without completing\")."
		n.LinkURL, n.LinkText = "https://app.prolific.com/", "Back to Prolific"
	case collect.PlatformMTurk:
		n.Message += " Please return the HIT on MTurk (\"Return\")."
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
