package http

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
)

// render writes a templ component as an HTML page with status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// maxJSONBody bounds a JSON request body.
const maxJSONBody = 64 << 10

// decodeJSON reads exactly one JSON object into dst, refusing unknown fields
// and trailing data. An empty body is allowed when emptyOK.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return badRequest("the request body is too large or unreadable")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return badRequest("the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest("malformed JSON: " + err.Error())
	}
	if dec.More() {
		return badRequest("malformed JSON: trailing data after the object")
	}
	return nil
}

var (
	markdown = goldmark.New()
	sanitize = bluemonday.UGCPolicy()
)

// renderMarkdown renders researcher-written text (plain text or Markdown)
// as sanitised HTML.
func renderMarkdown(src string) templ.Component {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		return templ.Raw("<p>" + templ.EscapeString(src) + "</p>")
	}
	return templ.Raw(string(sanitize.SanitizeBytes(buf.Bytes())))
}

// staticFiles serves the embedded CSS and JS. embed.FS has no modification
// times, so the files are cached for a short while only.
func staticFiles(fsys fs.FS) http.Handler {
	h := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}
