package web

import (
	"fmt"
	"net/http"
	"strconv"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSize is the side of the study link's QR code in pixels: sharp on a
// printed sheet at a few centimetres.
const qrSize = 512

// studyQR is a QR code of the study's public link, for lab use: a poster
// or a slide that people scan with a phone (GET
// /admin/studies/{slug}/qr.png).
func (s *Server) studyQR(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	png, err := qrcode.Encode(s.publicURL("/s/"+st.Slug), qrcode.Medium, qrSize)
	if err != nil {
		return fmt.Errorf("study QR code of %q: %w", st.Slug, err)
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.Header().Set("Content-Disposition", `inline; filename="`+st.Slug+`-qr.png"`)
	_, _ = w.Write(png) // the client has gone
	return nil
}
