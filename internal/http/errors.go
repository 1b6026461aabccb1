package http

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// httpError is an error with a status and a message for the user, raised by
// the HTTP layer itself (bad request bodies, missing tokens, ...).
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

var errNotFound = &httpError{status: http.StatusNotFound, msg: "page not found"}

func badRequest(msg string) error { return &httpError{status: http.StatusBadRequest, msg: msg} }

func unauthorized(msg string) error { return &httpError{status: http.StatusUnauthorized, msg: msg} }

// handlerFunc is a handler that reports failure as an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// retryAfter is the Retry-After of every 503 (seconds): a busy server or an
// unreachable database is worth asking again soon, not at once.
const retryAfter = "5"

// handle is the one adapter from handlerFunc to http.HandlerFunc: it maps
// the error to a status, answers with JSON under /api/ and with an HTML page
// elsewhere, and logs server errors (5xx) only: 503 (busy, database
// unavailable, too slow) as a warning, the others as errors.
func (s *Server) handle(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		if r.Context().Err() == context.Canceled {
			return // the client went away; nobody is left to answer
		}
		s.writeError(w, r, err)
	}
}

// writeError answers a request that failed with err.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := classify(err)
	switch {
	case status == http.StatusServiceUnavailable:
		s.log.WarnContext(r.Context(), "request refused: unavailable", "err", err,
			"method", r.Method, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()))
	case status >= 500:
		s.log.ErrorContext(r.Context(), "request failed", "err", err,
			"method", r.Method, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()))
		msg = "something went wrong on our side; please try again"
	}
	if ww, ok := w.(middleware.WrapResponseWriter); ok && ww.Status() != 0 {
		// The response was already started (a stream that failed half
		// way): cut the connection so the client sees an incomplete
		// response instead of a file that looks whole.
		panic(http.ErrAbortHandler)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	s.render(w, r, status, templates.NoticePage(templates.Notice{
		Title: http.StatusText(status), Message: msg, Status: status,
	}))
}

// classify maps an error to a status and a message fit for the user.
func classify(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	if ue, ok := collect.AsError(err); ok {
		switch ue.Kind {
		case collect.KindNotFound:
			return http.StatusNotFound, ue.Msg
		case collect.KindInvalid:
			return http.StatusUnprocessableEntity, ue.Msg
		case collect.KindForbidden:
			return http.StatusForbidden, ue.Msg
		case collect.KindConflict, collect.KindNotOpen, collect.KindFull:
			return http.StatusConflict, ue.Msg
		case collect.KindUnauthorized:
			return http.StatusUnauthorized, ue.Msg
		case collect.KindUnavailable:
			return http.StatusServiceUnavailable, ue.Msg
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, "the request took too long"
	}
	return http.StatusInternalServerError, "internal error"
}

// userMessage is the part of err meant for the user.
func userMessage(err error) string {
	_, msg := classify(err)
	return msg
}
