package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// itemImage serves an item's image by its sha256 (GET /img/{sha256}). The
// URL names the content, so the response is cached for good and
// revalidation by ETag costs no database query.
//
// Whatever a row says, the response is an image, a sound, a video or a
// 404: the content type comes from the bytes themselves (PNG, JPEG, GIF or
// WebP magic, or a sound's or video's probe: servedType), the bytes
// must hash to the URL, and nosniff plus an inline disposition with a fixed
// file name keep a browser from treating them as anything else. Uploads and
// imports already store only checked images; this guards rows stored
// before that, or by any later path.
//
// No request holds a whole image of its own: an image is served from the
// shared cache (image_cache.go), loaded there once and verified before
// its first byte is sent, with Range requests answered by
// http.ServeContent; one that does not fit is streamed from PostgreSQL a
// chunk at a time (serveStream).
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
	im, ok := s.images.get(sum)
	if !ok {
		rd, err := s.store.OpenItemImage(r.Context(), sum)
		if err != nil {
			return err
		}
		if !s.images.fits(rd.Size()) {
			return s.serveStream(w, r, rd)
		}
		im, ok, err = s.images.load(r.Context(), sum, rd.Size(), func(ctx context.Context) (*store.ImageReader, error) {
			return s.store.OpenItemImage(ctx, sum)
		})
		if errors.Is(err, errBadStoredImage) {
			s.log.WarnContext(r.Context(), "stored item is not an image matching its hash; not served", "sha256", sum)
			return errNotFound
		}
		if err != nil {
			return err
		}
		if !ok {
			return s.serveStream(w, r, rd)
		}
	}
	s.imageHeaders(h, sum, im.contentType, im.ext)
	// ServeContent answers Range and conditional requests; it ignores a
	// client that went away (nothing to log).
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(im.data))
	return nil
}

// imageHeaders sets the headers of a served image.
func (s *Server) imageHeaders(h http.Header, sum, contentType, ext string) {
	h.Set("ETag", `"`+sum+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", `inline; filename="`+sum+`.`+ext+`"`)
}

// serveStream sends an image a chunk at a time (whole responses only, no
// Range). The first chunk is sniffed before anything is sent (not an
// image: 404); the hash is computed as the chunks go, and the last chunk
// is sent only if the whole matches the URL: otherwise, or if the database
// fails half way, the connection is cut, so the client sees a failed
// response rather than a wrong image.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, rd *store.ImageReader) error {
	sum := chi.URLParam(r, "sha256")
	buf := make([]byte, min(store.ImageChunkBytes, rd.Size())) // the request's one chunk
	n, err := io.ReadFull(rd, buf[:min(int64(len(buf)), rd.Size())])
	if err != nil {
		return err
	}
	ct, ext, ok := media.Sniff(buf[:n])
	if !ok && (rd.Kind == study.ItemAudio || rd.Kind == study.ItemVideo) {
		// Not an image: a sound or a video, served as the type its probe
		// found when it was stored (the bytes are those probed: the hash
		// is checked below as they go), not probed again on every request.
		ext, ok = avfile.ExtOf(rd.ContentType)
		ct, ext = rd.ContentType, strings.TrimPrefix(ext, ".")
	}
	if !ok {
		s.log.WarnContext(r.Context(), "stored item is not an image matching its hash; not served", "sha256", sum, "sniffed", http.DetectContentType(buf[:n]))
		return errNotFound
	}
	h := w.Header()
	s.imageHeaders(h, sum, ct, ext)
	h.Set("Content-Length", strconv.FormatInt(rd.Size(), 10))
	if r.Method == http.MethodHead {
		return nil
	}
	hash := sha256.New()
	sent := int64(0)
	for {
		hash.Write(buf[:n])
		if sent+int64(n) == rd.Size() && hex.EncodeToString(hash.Sum(nil)) != sum {
			s.log.WarnContext(r.Context(), "stored item does not match its hash; response cut", "sha256", sum)
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(buf[:n]); err != nil {
			s.clientGone(r, err)
			return nil
		}
		if sent += int64(n); sent == rd.Size() {
			return nil
		}
		if n, err = io.ReadFull(rd, buf[:min(int64(len(buf)), rd.Size()-sent)]); err != nil {
			if r.Context().Err() == context.Canceled {
				s.clientGone(r, err) // nobody is left to cut off
				return nil
			}
			log := s.log.ErrorContext
			if errors.Is(err, context.DeadlineExceeded) {
				log = s.log.WarnContext // too slow a client or database: not a fault
			}
			log(r.Context(), "image stream failed; response cut", "sha256", sum, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
}

// clientGone logs, below ERROR, a response the client stopped reading
// (it hung up, or the connection broke): nothing on the server failed.
func (s *Server) clientGone(r *http.Request, err error) {
	s.log.DebugContext(r.Context(), "client went away mid-response", "path", r.URL.Path, "err", err)
}
