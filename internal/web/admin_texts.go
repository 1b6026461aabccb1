package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// maxTextRequestBytes bounds the body of a text upload: the items
// (media.MaxTextUploadBytes) and room for the form's own parts.
const maxTextRequestBytes = media.MaxTextUploadBytes + 64<<10

// uploadTexts adds text items to a study (issue 29; POST
// /admin/studies/{slug}/texts): typed into the "texts" field, one per
// line, or a UTF-8 .txt file (one per line) or a CSV of label,text in the
// "file" field. The body is read as a stream and parsed while it arrives
// (media.ReadTextLines, ReadTextCSV: bounded in bytes, lines and items,
// each line checked), so nothing but the accepted texts is kept in
// memory. The texts are stored all or none; a refusal ends, as an image
// upload's does, in a 303 to the study page with the reason, the line
// included, and nothing stored.
func (s *Server) uploadTexts(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	var (
		texts  []media.TextItem
		source string
	)
	err = s.offSlot(r, func() error {
		var err error
		texts, source, err = readTextUpload(w, r)
		return err
	})
	if err != nil {
		return s.refuseUpload(w, r, st, err, false)
	}
	added, err := s.store.AddTextItems(r.Context(), st.ID, texts, source, media.MaxStudyTextItems)
	if err != nil {
		return s.refuseUpload(w, r, st, err, false)
	}
	id, err := s.store.SaveUploadReport(r.Context(), st.ID, study.UploadReport{Added: len(added)})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?upload="+id+"#upload", http.StatusSeeOther)
	return nil
}

// readTextUpload reads the text upload's form (multipart, or a plain
// urlencoded form with the "texts" field alone): the texts of the one
// source it names, and that source ("typed" or the file's name). Both a
// typed list and a file, or neither, is refused.
func readTextUpload(w http.ResponseWriter, r *http.Request) ([]media.TextItem, string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTextRequestBytes)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		// A form without a file input posts urlencoded: ParseForm reads at
		// most the body's bound.
		if err := r.ParseForm(); err != nil {
			return nil, "", textReadError(err)
		}
		texts, err := media.ReadTextLines(strings.NewReader(r.PostForm.Get("texts")))
		if err != nil {
			return nil, "", badRequest("the typed items were not added: " + err.Error())
		}
		return texts, "typed", nil
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, "", badRequest("unreadable upload (multipart/form-data expected): " + err.Error())
	}
	var (
		texts  []media.TextItem
		source string
	)
	for parts := 0; ; parts++ {
		if parts > maxFormFields {
			return nil, "", badRequest(fmt.Sprintf("the upload has more than %d parts", maxFormFields))
		}
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", textReadError(err)
		}
		name, file := p.FormName(), p.FileName()
		switch {
		case name == "texts" && file == "":
			got, err := media.ReadTextLines(p)
			var te *media.TextError
			if errors.As(err, &te) && te.Line == 0 && strings.HasPrefix(te.Reason, "no items") {
				continue // the box left empty: the file, if any, has the items
			}
			if err != nil {
				return nil, "", textReadError(fmt.Errorf("the typed items were not added: %w", err))
			}
			if texts != nil {
				return nil, "", badRequest("type the items or choose a file, not both")
			}
			texts, source = got, "typed"
		case name == "file" && file != "":
			read := media.ReadTextLines
			switch strings.ToLower(path.Ext(file)) {
			case ".csv":
				read = media.ReadTextCSV
			case ".txt":
			default:
				return nil, "", badRequest(fmt.Sprintf("%s: choose a UTF-8 .txt file (one item per line) or a .csv of label,text", media.ShortName(file)))
			}
			got, err := read(p)
			if err != nil {
				return nil, "", textReadError(fmt.Errorf("%s was not added: %w", media.ShortName(file), err))
			}
			if texts != nil {
				return nil, "", badRequest("type the items or choose a file, not both")
			}
			texts, source = got, file
		default:
			// An empty file input, or a field this form does not have.
			if _, err := io.Copy(io.Discard, io.LimitReader(p, maxTextRequestBytes)); err != nil {
				return nil, "", textReadError(err)
			}
		}
		p.Close()
	}
	if texts == nil {
		return nil, "", badRequest("type the items, one per line, or choose a .txt or .csv file")
	}
	return texts, source, nil
}

// textReadError turns a text upload's reading error into the refusal the
// researcher reads: the body's bound, a transfer too slow, or the
// parser's reason (a line and what is wrong with it).
func textReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &httpError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("the upload is larger than %s; nothing was added: split it", media.HumanBytes(maxTextRequestBytes))}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &httpError{status: http.StatusRequestTimeout, msg: "the upload arrived too slowly; nothing was added"}
	}
	return badRequest(err.Error())
}
