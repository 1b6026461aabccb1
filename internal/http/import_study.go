package http

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// importForm shows the imports (GET /admin/import).
func (s *Server) importForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, templates.ImportShowPage(templates.ImportPage{}))
}

// uploadedFile parses a multipart upload and returns its "file" field.
func (s *Server) uploadedFile(w http.ResponseWriter, r *http.Request) (multipart.File, *multipart.FileHeader, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUploadBytes)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, nil, &httpError{status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("the upload is larger than %d MiB", s.cfg.MaxUploadBytes>>20)}
		}
		return nil, nil, badRequest("unreadable upload: " + err.Error())
	}
	f, fh, err := r.FormFile("file")
	if err != nil {
		return nil, nil, &httpError{status: http.StatusUnprocessableEntity, msg: "choose a file"}
	}
	return f, fh, nil
}

// importFailed shows the import page again with the reason, or passes
// server errors on.
func (s *Server) importFailed(w http.ResponseWriter, r *http.Request, err error) error {
	status, msg := classify(err)
	if status >= 500 {
		return err
	}
	return s.render(w, r, status, templates.ImportShowPage(templates.ImportPage{Error: msg}))
}

// importBundle creates a study from a bundle (POST /admin/import/bundle).
func (s *Server) importBundle(w http.ResponseWriter, r *http.Request) error {
	f, fh, err := s.uploadedFile(w, r)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	defer r.MultipartForm.RemoveAll()
	defer f.Close()
	st, _, err := s.store.ImportBundle(r.Context(), f, fh.Size, r.PostFormValue("slug"))
	if err != nil {
		return s.importFailed(w, r, err)
	}
	return s.toDashboard(w, r, st.Slug, "imported", "")
}

// maxTripletCSV bounds a triplet file (it is read into memory).
const maxTripletCSV = 256 << 20

// importTriplets creates a label-only study from a triplet CSV
// (POST /admin/import/triplets).
func (s *Server) importTriplets(w http.ResponseWriter, r *http.Request) error {
	f, _, err := s.uploadedFile(w, r)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	defer r.MultipartForm.RemoveAll()
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTripletCSV+1))
	if err != nil {
		return err
	}
	if len(data) > maxTripletCSV {
		return s.importFailed(w, r, &httpError{status: http.StatusRequestEntityTooLarge, msg: "the triplet file is larger than 256 MiB"})
	}
	st, _, err := s.store.ImportTriplets(r.Context(), collect.ImportTripletsInput{
		Slug: r.PostFormValue("slug"), Title: r.PostFormValue("title"), CSV: data})
	if err != nil {
		return s.importFailed(w, r, err)
	}
	return s.toDashboard(w, r, st.Slug, "imported", "")
}
