package http

import (
	"io"
	"net/http"

	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/templates"
)

// importForm shows the imports (GET /admin/import).
func (s *Server) importForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, templates.ImportShowPage(templates.ImportPage{}))
}

// uploadedFile reads a multipart upload as a stream: its "file" field goes
// to sp (one file; a second one is refused), its text fields are returned.
func (s *Server) uploadedFile(w http.ResponseWriter, r *http.Request, sp *spool) (*io.SectionReader, string, map[string]string, error) {
	var file *io.SectionReader
	var name string
	fields, err := s.readMultipart(w, r, sp, "file", func(n string, sec *io.SectionReader) error {
		if file != nil {
			return &httpError{status: http.StatusUnprocessableEntity, msg: "choose one file (this upload has " + name + " and " + n + ")"}
		}
		file, name = sec, n
		return nil
	})
	if err != nil {
		return nil, "", nil, err
	}
	if file == nil {
		return nil, "", nil, &httpError{status: http.StatusUnprocessableEntity, msg: "choose a file"}
	}
	return file, name, fields, nil
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
// The bundle is spooled to a temporary file and read from there: its CSVs
// as streams, its images one at a time, each checked like an upload.
func (s *Server) importBundle(w http.ResponseWriter, r *http.Request) error {
	sp, err := newSpool()
	if err != nil {
		return err
	}
	defer sp.Close()
	f, name, fields, err := s.uploadedFile(w, r, sp)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	st, _, err := studyfile.ImportBundle(r.Context(), s.store, f, f.Size(), fields["slug"],
		studyfile.BundleLimits{MaxImageBytes: s.cfg.MaxImageBytes})
	if err != nil {
		return s.importFailed(w, r, named(name, err))
	}
	return s.toDashboard(w, r, st.Slug, "imported", "")
}

// importTriplets creates a label-only study from a triplet CSV
// (POST /admin/import/triplets), read as a stream from a temporary file.
func (s *Server) importTriplets(w http.ResponseWriter, r *http.Request) error {
	sp, err := newSpool()
	if err != nil {
		return err
	}
	defer sp.Close()
	f, name, fields, err := s.uploadedFile(w, r, sp)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	st, _, err := studyfile.ImportTriplets(r.Context(), s.store, studyfile.TripletsInput{
		Slug: fields["slug"], Title: fields["title"], CSV: f})
	if err != nil {
		return s.importFailed(w, r, named(name, err))
	}
	return s.toDashboard(w, r, st.Slug, "imported", "")
}

// named prefixes a user-facing error's message with the uploaded file's
// name, so every refusal says which file it is about.
func named(file string, err error) error {
	status, msg := classify(err)
	if status >= 500 {
		return err
	}
	return &httpError{status: status, msg: file + ": " + msg}
}
