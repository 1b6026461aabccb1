package http

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/templates"
)

// uploadItems adds images to a study: any number of image files and zip
// archives in the "files" field (POST /admin/studies/{slug}/items). Bad
// files are listed with their reason; the good ones are kept.
func (s *Server) uploadItems(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUploadBytes)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &httpError{status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("the upload is larger than %d MiB; split it", s.cfg.MaxUploadBytes>>20)}
		}
		return badRequest("unreadable upload: " + err.Error())
	}
	defer r.MultipartForm.RemoveAll()
	files := r.MultipartForm.File["files"]
	if len(files) == 0 {
		return badRequest("choose at least one file")
	}
	var imgs []media.Image
	var rejected []media.Rejection
	for _, fh := range files {
		got, rej, err := s.readUpload(fh)
		if err != nil {
			return err
		}
		imgs = append(imgs, got...)
		rejected = append(rejected, rej...)
	}
	added, dups, err := s.store.AddItems(r.Context(), st.ID, imgs)
	if err != nil {
		return err
	}
	v, err := s.studyPage(r, st)
	if err != nil {
		return err
	}
	v.Upload = &templates.UploadReport{Added: added, Rejected: append(rejected, dups...)}
	return s.render(w, r, http.StatusOK, templates.StudyShowPage(v))
}

var zipMagic = []byte("PK\x03\x04")

// readUpload checks one uploaded file: a zip archive (recognised by its
// content) is unpacked, anything else must be an image.
func (s *Server) readUpload(fh *multipart.FileHeader) ([]media.Image, []media.Rejection, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open upload %s: %w", fh.Filename, err)
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if n == 4 && bytes.Equal(head, zipMagic) {
		imgs, rej := media.ReadZip(f, fh.Size, s.cfg.MaxImageBytes)
		if len(imgs) == 0 && len(rej) == 0 {
			rej = append(rej, media.Rejection{Name: fh.Filename, Reason: "the zip holds no images"})
		}
		return imgs, rej, nil
	}
	if fh.Size > s.cfg.MaxImageBytes {
		_, err := media.Check(fh.Filename, make([]byte, s.cfg.MaxImageBytes+1), s.cfg.MaxImageBytes)
		return nil, []media.Rejection{{Name: fh.Filename, Reason: err.Error()}}, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, fmt.Errorf("read upload %s: %w", fh.Filename, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("read upload %s: %w", fh.Filename, err)
	}
	im, err := media.Check(fh.Filename, data, s.cfg.MaxImageBytes)
	if err != nil {
		return nil, []media.Rejection{{Name: fh.Filename, Reason: err.Error()}}, nil
	}
	return []media.Image{im}, nil, nil
}
