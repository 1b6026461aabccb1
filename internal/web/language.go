package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// pageLangKey keys a participant request's pageLang in its context.
type pageLangKey struct{}

// pageLang is where a participant page's handler leaves its study's
// texts, so that the error adapter answers a refusal or a failure in the
// study's language too.
type pageLang struct {
	texts *i18n.Texts
}

// withPageLang gives a request for a participant page (/s/...) a pageLang.
func withPageLang(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), pageLangKey{}, &pageLang{}))
}

// pageTexts returns the texts a participant page's handler left for r,
// and false if it left none (an admin or API request, or a study that
// was not found).
func pageTexts(ctx context.Context) (i18n.Texts, bool) {
	pl, ok := ctx.Value(pageLangKey{}).(*pageLang)
	if !ok || pl.texts == nil {
		return i18n.Texts{}, false
	}
	return *pl.texts, true
}

// studyTexts returns study st's texts (its language and overrides) and
// leaves them for the error adapter of request r.
func (s *Server) studyTexts(r *http.Request, st study.Study) i18n.Texts {
	tx := s.lang.Texts(st.Language, st.TextOverrides)
	if pl, ok := r.Context().Value(pageLangKey{}).(*pageLang); ok {
		pl.texts = &tx
	}
	return tx
}

// notice is a participant notice in the texts' language.
func notice(l i18n.Texts, status int, title, message string) templates.Notice {
	return templates.Notice{Title: title, Message: message, Status: status, Lang: l.Lang(), Dir: l.Dir()}
}

// refusal is an error a participant page shows in its study's language:
// key with args, and in English (the message a log or the API shows) en.
type refusal struct {
	status int
	key    i18n.Key
	args   []any
	en     string
}

func (e *refusal) Error() string { return e.en }

// refuse returns the refusal of key with args, with status.
func (s *Server) refuse(status int, key i18n.Key, args ...any) error {
	return &refusal{status: status, key: key, args: args, en: s.lang.Texts(i18n.Default, nil).T(key, args...)}
}

// translatedError is the notice of an error on a participant page whose
// handler left its study's texts: a refusal in the study's words; a
// failure of ours, or a refusal that speaks English only, in the
// language's general words (an English study keeps the specific message).
func translatedError(l i18n.Texts, err error, status int, msg string) templates.Notice {
	n := notice(l, status, l.T(i18n.ErrorTitle), msg)
	var rf *refusal
	if errors.As(err, &rf) {
		n.Message = l.T(rf.key, rf.args...)
		return n
	}
	switch {
	case status == http.StatusServiceUnavailable:
		n.Message = l.T(i18n.ErrorBusy)
	case status >= 500:
		n.Message = l.T(i18n.ErrorServer)
	case l.Lang() != i18n.Default:
		n.Message = l.T(i18n.ErrorGeneric)
	}
	return n
}
