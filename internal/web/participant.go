package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
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
func (s *Server) studyFromURL(r *http.Request) (study.Study, error) {
	return s.store.StudyBySlug(r.Context(), chi.URLParam(r, "slug"))
}

// annotatorStudy loads the study of an annotator page; an MTurk study's
// pages may be framed by MTurk.
func (s *Server) annotatorStudy(w http.ResponseWriter, r *http.Request) (study.Study, error) {
	st, err := s.studyFromURL(r)
	if err == nil && st.Platform.Kind == study.PlatformMTurk {
		s.allowMTurkFraming(w)
	}
	if err == nil {
		s.studyTexts(r, st) // the error adapter's, should the page fail
	}
	return st, err
}

// pageToken returns the participant token an MTurk study's page carried
// (participantTokenField in the URL or the form); "" for other studies.
func pageToken(r *http.Request, st study.Study) string {
	if st.Platform.Kind != study.PlatformMTurk {
		return ""
	}
	if t := r.FormValue(participantTokenField); len(t) <= maxTokenLen {
		return t
	}
	return ""
}

// participantPath is the path of one of study st's annotator pages (page
// "/q", "/done"); an MTurk study's carries the participant token.
func participantPath(st study.Study, token, page string) string {
	path := "/s/" + st.Slug + page
	if st.Platform.Kind == study.PlatformMTurk && token != "" {
		path += "?" + participantTokenField + "=" + url.QueryEscape(token)
	}
	return path
}

// browserParticipant returns the browser's participant of study st, if
// any: by the page's token on an MTurk study, by the cookie otherwise.
func (s *Server) browserParticipant(r *http.Request, st study.Study) (study.Participant, bool, error) {
	token := pageToken(r, st)
	if st.Platform.Kind != study.PlatformMTurk {
		c, err := r.Cookie(participantCookie)
		if err != nil {
			return study.Participant{}, false, nil
		}
		token = c.Value
	}
	if token == "" {
		return study.Participant{}, false, nil
	}
	p, err := s.store.AuthenticateParticipant(r.Context(), token)
	if collect.KindOf(err) == study.KindUnauthorized {
		return study.Participant{}, false, nil
	}
	if err != nil {
		return study.Participant{}, false, err
	}
	if p.StudyID != st.ID {
		return study.Participant{}, false, nil
	}
	return p, true, nil
}

// noParticipant answers a question, answer or done page of a browser
// without a participant of st: back to the study's start page, or on
// MTurk (whose start page needs MTurk's link) a page asking to open the
// HIT again.
func (s *Server) noParticipant(w http.ResponseWriter, r *http.Request, st study.Study) error {
	if st.Platform.Kind == study.PlatformMTurk {
		l := s.studyTexts(r, st)
		return s.render(w, r, http.StatusUnauthorized, templates.NoticePage(notice(l, http.StatusUnauthorized,
			l.T(i18n.OpenAgainTitle), l.T(i18n.OpenAgain))))
	}
	http.Redirect(w, r, "/s/"+st.Slug, http.StatusSeeOther)
	return nil
}

// annotatorParticipant returns the study of the URL and the browser's
// participant of it. A browser without one is answered by noParticipant
// and ok is false: the response is written.
func (s *Server) annotatorParticipant(w http.ResponseWriter, r *http.Request) (st study.Study, p study.Participant, ok bool, err error) {
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
func (s *Server) annotatorProgress(w http.ResponseWriter, r *http.Request) (study.Study, study.Participant, study.Progress, bool, error) {
	st, p, ok, err := s.annotatorParticipant(w, r)
	if !ok || err != nil {
		return st, p, study.Progress{}, false, err
	}
	pr, err := s.store.Next(r.Context(), p.ID)
	if collect.KindOf(err) == study.KindNotOpen {
		return st, p, pr, false, s.render(w, r, http.StatusOK, templates.NoticePage(notOpenNotice(s.studyTexts(r, st), st)))
	}
	if collect.KindOf(err) == study.KindUnauthorized { // the participant is gone: start again
		return st, p, pr, false, s.noParticipant(w, r, st)
	}
	if err != nil {
		return st, p, pr, false, err
	}
	return st, p, pr, true, nil
}

// externalID returns the participant identity a recruiting platform put in
// the URL: the study's platform's parameter (collect.Platform.IDParams),
// without the white space around it.
func externalID(r *http.Request, pl study.Platform) string {
	q := r.URL.Query()
	for _, k := range pl.IDParams() {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			return v
		}
	}
	return ""
}

// missingIDNotice is the page of someone who would join study st, which
// takes its participants from a platform (collect.Platform.RequiresID),
// without the platform's id for them: a link opened outside the platform,
// or one that lost the parameter. Nothing is stored; the page says where
// the study must be opened from and, for the researcher trying the study,
// which parameter carries the id.
func missingIDNotice(l i18n.Texts, st study.Study) templates.Notice {
	param := st.Platform.IDParams()[0]
	example := "/s/" + st.Slug + "?" + param + "=test"
	n := notice(l, http.StatusBadRequest, "", "")
	switch st.Platform.Kind {
	case study.PlatformProlific:
		n.Title, n.Message = l.T(i18n.MissingProlT), l.T(i18n.MissingProl, param, example)
		n.LinkURL, n.LinkText = "https://app.prolific.com/", l.T(i18n.BackToProlific)
	case study.PlatformMTurk:
		n.Title, n.Message = l.T(i18n.MissingMTurkT), l.T(i18n.MissingMTurk)
	default:
		n.Title, n.Message = l.T(i18n.MissingGenericT), l.T(i18n.MissingGeneric, param, example)
	}
	return n
}

// missingIDMessage is the API's answer to a join of platform study st
// without an external_id (missingIDNotice's).
func missingIDMessage(st study.Study) string {
	switch st.Platform.Kind {
	case study.PlatformProlific:
		return "this study takes its participants from Prolific: join with the participant's Prolific id (PROLIFIC_PID) as external_id"
	case study.PlatformMTurk:
		return "this study takes its participants from MTurk: join with the worker's workerId as external_id"
	}
	return "this study takes its participants from a recruiting platform: join with the participant's id there (the link's " +
		st.Platform.IDParam + " parameter) as external_id"
}

// completedOtherHITNotice is the page of an MTurk worker who completed
// the study and opens another of its HITs (another assignment,
// collect.ErrCompletedOtherAssignment): they are asked to return it, and
// the page posts nothing to MTurk, so the study is paid once.
func completedOtherHITNotice(l i18n.Texts) templates.Notice {
	return notice(l, http.StatusConflict, l.T(i18n.CompletedT), l.T(i18n.Completed))
}

// fullNotice is the page of a study whose quota is taken.
func fullNotice(l i18n.Texts, st study.Study) templates.Notice {
	n := notice(l, 0, l.T(i18n.FullTitle, st.Title), l.T(i18n.Full))
	switch st.Platform.Kind {
	case study.PlatformProlific:
		n.Message = l.T(i18n.FullProlific)
		n.LinkURL, n.LinkText = "https://app.prolific.com/", l.T(i18n.BackToProlific)
	case study.PlatformMTurk:
		n.Message = l.T(i18n.FullMTurk)
	}
	return n
}

// tookPartNotice is the page of someone a study refuses because they took
// part in a related study.
func tookPartNotice(l i18n.Texts, st study.Study) templates.Notice {
	n := notice(l, http.StatusForbidden, l.T(i18n.TookPartTitle), l.T(i18n.TookPart))
	switch st.Platform.Kind {
	case study.PlatformProlific:
		n.Message = l.T(i18n.TookPartProl)
		n.LinkURL, n.LinkText = "https://app.prolific.com/", l.T(i18n.BackToProlific)
	case study.PlatformMTurk:
		n.Message = l.T(i18n.TookPartMTurk)
	}
	return n
}

// notOpenNotice is the friendly page of a study that takes no answers now.
func notOpenNotice(l i18n.Texts, st study.Study) templates.Notice {
	switch st.Status {
	case study.StatusPaused:
		return notice(l, 0, l.T(i18n.PausedTitle, st.Title), l.T(i18n.Paused))
	case study.StatusClosed:
		return notice(l, 0, l.T(i18n.ClosedTitle, st.Title), l.T(i18n.Closed))
	default:
		return notice(l, 0, l.T(i18n.NotOpenTitle), l.T(i18n.NotOpen))
	}
}
