package http

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// itemImage serves an item's image by its sha256 (GET /img/{sha256}). The
// URL names the content, so the response is cached for good and
// revalidation by ETag costs no database query.
func (s *Server) itemImage(w http.ResponseWriter, r *http.Request) error {
	sum := chi.URLParam(r, "sha256")
	if !sha256RE.MatchString(sum) {
		return errNotFound
	}
	etag := `"` + sum + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == "*" || strings.Contains(inm, etag)) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	ct, data, err := s.store.ItemImage(r.Context(), sum)
	if err != nil {
		w.Header().Del("ETag")
		w.Header().Del("Cache-Control")
		return err
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, err = w.Write(data)
	return err
}
