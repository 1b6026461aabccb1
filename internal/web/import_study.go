package web

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

// upload is the file of a one-file multipart upload, spooled to a
// temporary file, with the form's text fields. Close removes the spool.
type upload struct {
	file   *io.SectionReader
	name   string
	fields map[string]string
	sp     *spool
}

func (u *upload) Close() { u.sp.Close() }

// receiveFile reads a multipart upload as a stream: its "file" field goes
// to a spool (one file; a second one is refused), its text fields are kept.
func (s *Server) receiveFile(w http.ResponseWriter, r *http.Request) (*upload, error) {
	sp, err := newSpool()
	if err != nil {
		return nil, err
	}
	u := &upload{sp: sp}
	u.fields, err = s.readMultipart(w, r, sp, "file", func(n string, sec *io.SectionReader) error {
		if u.file != nil {
			return &httpError{status: http.StatusUnprocessableEntity, msg: "choose one file (this upload has " + u.name + " and " + n + ")"}
		}
		u.file, u.name = sec, n
		return nil
	})
	if err == nil && u.file == nil {
		err = &httpError{status: http.StatusUnprocessableEntity, msg: "choose a file"}
	}
	if err != nil {
		sp.Close()
		return nil, err
	}
	return u, nil
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

// importBundle creates a study from a bundle (POST /admin/import/bundle)
// with the form's title and slug (empty: the bundle's; see
// studyfile.ImportBundle for a slug that is taken).
// The bundle is spooled to a temporary file and read from there: its CSVs
// as streams, its images one at a time, each checked like an upload.
func (s *Server) importBundle(w http.ResponseWriter, r *http.Request) error {
	up, err := s.receiveFile(w, r)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	defer up.Close()
	st, _, err := studyfile.ImportBundle(r.Context(), s.store, up.file, up.file.Size(),
		studyfile.BundleNames{Slug: up.fields["slug"], Title: up.fields["title"]},
		studyfile.BundleLimits{MaxImageBytes: s.cfg.MaxImageBytes, MaxImagesBytes: s.cfg.ItemLimits.MaxStudyBytes})
	if err != nil {
		return s.importFailed(w, r, named(up.name, err))
	}
	if err := s.ownStudy(r.Context(), st); err != nil {
		return err
	}
	return s.toDashboard(w, r, st.Slug, "imported", "")
}

// importTriplets creates a label-only study from a triplet CSV, or from
// an odd-one-out or rank trial file (POST /admin/import/triplets), read
// from a temporary file.
func (s *Server) importTriplets(w http.ResponseWriter, r *http.Request) error {
	up, err := s.receiveFile(w, r)
	if err != nil {
		return s.importFailed(w, r, err)
	}
	defer up.Close()
	// An odd-one-out or rank trial file (issue 27), known by its header,
	// makes a study of its format; anything else is read as triplets.
	st, _, err := studyfile.ImportTrialsOrTriplets(r.Context(), s.store, studyfile.TripletsInput{
		Slug: up.fields["slug"], Title: up.fields["title"], CSV: up.file})
	if err != nil {
		return s.importFailed(w, r, named(up.name, err))
	}
	if err := s.ownStudy(r.Context(), st); err != nil {
		return err
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
