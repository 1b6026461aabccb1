package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
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
		tw := trackStart(w)
		if strings.HasPrefix(r.URL.Path, "/s/") {
			r = withPageLang(r) // a participant page: its errors speak its study's language
		}
		err := fn(tw, r)
		if err == nil {
			return
		}
		if r.Context().Err() == context.Canceled {
			return // the client went away; nobody is left to answer
		}
		s.writeError(tw, r, err)
	}
}

// startWriter is a ResponseWriter that remembers whether the response was
// started (a final status sent, explicitly or by the first Write), so that
// a failure after the first byte cuts the connection instead of ending the
// response as if it were whole. handle and the recoverer install it; it
// passes Flush and, through Unwrap, http.ResponseController on.
type startWriter struct {
	http.ResponseWriter
	started bool
}

// trackStart returns w's startWriter, or wraps w in a new one.
func trackStart(w http.ResponseWriter) *startWriter {
	if tw, ok := w.(*startWriter); ok {
		return tw
	}
	return &startWriter{ResponseWriter: w}
}

func (w *startWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols { // 1xx other than 101 are informational
		w.started = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *startWriter) Write(p []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps net/http's sendfile path for static files.
func (w *startWriter) ReadFrom(r io.Reader) (int64, error) {
	w.started = true
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
}

func (w *startWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls: the error of
// the flush reaches it.
func (w *startWriter) FlushError() error {
	w.started = true // net/http sends the header with the first flush
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *startWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// responseStarted reports whether the response on w was started, by any
// startWriter or chi's logging wrapper along w's Unwrap chain.
func responseStarted(w http.ResponseWriter) bool {
	for w != nil {
		switch x := w.(type) {
		case *startWriter:
			if x.started {
				return true
			}
		case middleware.WrapResponseWriter:
			if x.Status() != 0 {
				return true
			}
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
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
	if responseStarted(w) {
		// The response was already started (a stream that failed half
		// way): cut the connection (HTTP/1.1: no terminating chunk;
		// HTTP/2: a stream reset) so the client sees an incomplete
		// response instead of a file that looks whole.
		panic(http.ErrAbortHandler)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		_ = writeJSON(w, status, map[string]string{"error": msg}) // the status is sent; a failed body means the client left
		return
	}
	n := templates.Notice{Title: http.StatusText(status), Message: msg, Status: status}
	if l, ok := pageTexts(r.Context()); ok {
		n = translatedError(l, err, status, msg)
	}
	if err := s.render(w, r, status, templates.NoticePage(n)); err != nil && !responseStarted(w) {
		// The notice page did not render: the message as plain text rather
		// than an empty 200.
		http.Error(w, msg, status)
	}
}

// classify maps an error to a status and a message fit for the user.
func classify(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	var rf *refusal
	if errors.As(err, &rf) {
		return rf.status, rf.en
	}
	if ue, ok := collect.AsError(err); ok {
		switch ue.Kind {
		case study.KindNotFound:
			return http.StatusNotFound, ue.Msg
		case study.KindInvalid:
			return http.StatusUnprocessableEntity, ue.Msg
		case study.KindForbidden:
			return http.StatusForbidden, ue.Msg
		case study.KindConflict, study.KindNotOpen, study.KindFull:
			return http.StatusConflict, ue.Msg
		case study.KindUnauthorized:
			return http.StatusUnauthorized, ue.Msg
		case study.KindUnavailable:
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
