package http

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/media"
)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// itemImage serves an item's image by its sha256 (GET /img/{sha256}). The
// URL names the content, so the response is cached for good and
// revalidation by ETag costs no database query.
//
// Whatever a row says, the response is an image or a 404: the content type
// comes from the bytes themselves (PNG, JPEG, GIF or WebP magic), the bytes
// must hash to the URL, and nosniff plus an inline disposition with a fixed
// file name keep a browser from treating them as anything else. Uploads and
// imports already store only checked images; this guards rows stored
// before that, or by any later path.
func (s *Server) itemImage(w http.ResponseWriter, r *http.Request) error {
	sum := chi.URLParam(r, "sha256")
	if !sha256RE.MatchString(sum) {
		return errNotFound
	}
	etag := `"` + sum + `"`
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == "*" || strings.Contains(inm, etag)) {
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	_, data, err := s.store.ItemImage(r.Context(), sum)
	if err != nil {
		return err
	}
	ct, ext, ok := media.Sniff(data)
	if got := sha256.Sum256(data); !ok || hex.EncodeToString(got[:]) != sum {
		s.log.WarnContext(r.Context(), "stored item is not an image matching its hash; not served", "sha256", sum, "sniffed", http.DetectContentType(data))
		return errNotFound
	}
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", `inline; filename="`+sum+`.`+ext+`"`)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	_, err = w.Write(data)
	return err
}
