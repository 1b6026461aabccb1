package web

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A panic after the response was started cuts the connection instead of
// appending a 500 body to a half-sent file; a panic before it is a 500.
func TestRecovererCutsAStartedResponse(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(s.recoverer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/started" {
			w.Header().Set("Content-Type", "text/csv")
			w.Write([]byte("a,b\n1,2\n"))
			http.NewResponseController(w).Flush()
		}
		panic("boom")
	})))
	defer srv.Close()

	res, err := http.Get(srv.URL + "/started")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a panic half way: body %q, error %v; want an unexpected EOF", b, err)
	}

	res, err = http.Get(srv.URL + "/early")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError {
		t.Errorf("a panic before the response: %d, want 500", res.StatusCode)
	}
}

// The wrapper that tracks a response's start keeps http.ResponseController
// working (deadlines, flushes), as streaming routes need.
func TestStartWriterKeepsResponseController(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	errs := make(chan error, 2)
	srv := httptest.NewServer(s.recoverer(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		rc := http.NewResponseController(w)
		errs <- rc.SetWriteDeadline(time.Now().Add(time.Minute))
		w.Write([]byte("x"))
		errs <- rc.Flush()
		return nil
	})))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("through the wrappers: %v", err)
		}
	}
}
