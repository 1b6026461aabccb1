package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// uploadItems adds images to a study: any number of image files and zip
// archives in the "files" field (POST /admin/studies/{slug}/items). Bad
// files are listed with their reason; the good ones are kept. The upload is
// read as a stream into a temporary file; one image at a time is in memory.
// Like an upload that went through, one refused whole (no file, too large,
// too many files, unreadable) ends in a redirect to the study page, which
// shows the reason (refuseUpload).
func (s *Server) uploadItems(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	sp, err := newSpool()
	if err != nil {
		return err
	}
	defer sp.Close()
	var (
		imgs     []media.Image
		rejected []media.Rejection
		files    int
		expanded int64
	)
	_, err = s.readMultipart(w, r, sp, "files", func(name string, sec *io.SectionReader) error {
		files++
		got, rej, n := s.checkUpload(name, sec, s.expandLimit()-expanded, soundLimits(st))
		expanded += n
		imgs, rejected = append(imgs, got...), append(rejected, rej...)
		if len(imgs)+len(rejected) > s.cfg.MaxUploadFiles {
			return &httpError{status: http.StatusUnprocessableEntity,
				msg: fmt.Sprintf("the upload holds more than %d files (zip entries included); nothing was added: split it", s.cfg.MaxUploadFiles)}
		}
		return nil
	})
	if err == nil && files == 0 {
		err = badRequest("choose at least one file")
	}
	if err != nil {
		return s.refuseUpload(w, r, st, err, false)
	}
	added, dups, err := s.store.AddItemsWithin(r.Context(), st.ID, imgs, s.cfg.ItemLimits)
	if err != nil {
		// The store's own refusals (text it cannot keep) add nothing.
		return s.refuseUpload(w, r, st, err, false)
	}
	// The report is kept for the page the upload redirects to: reloading
	// that page shows it again and never sends the files again.
	id, err := s.store.SaveUploadReport(r.Context(), st.ID, study.UploadReport{Added: len(added), Rejected: append(rejected, dups...)})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?upload="+id+"#upload", http.StatusSeeOther)
	return nil
}

// maxRefusalText bounds the reason a refusal's report keeps: an unreadable
// multipart header is quoted in its error, and may be megabytes long.
const maxRefusalText = 8 << 10

// refuseUpload ends a browser upload (images, or gold triplets when gold)
// that err refused whole as an upload that went through ends: the reason
// is kept as the upload's report, nothing else is stored, and the request
// is redirected (303) to the study page, which shows the reason, so a
// reload of that page does not send the files again. The request body is
// not read any further: an upload over the limit stops where it reached
// it. Server errors (5xx), a study gone meanwhile (404) and a request
// whose client went away are returned as they are.
func (s *Server) refuseUpload(w http.ResponseWriter, r *http.Request, st study.Study, err error, gold bool) error {
	status, msg := classify(err)
	if status >= 500 || status == http.StatusNotFound || r.Context().Err() != nil {
		return err
	}
	if len(msg) > maxRefusalText {
		msg = strings.ToValidUTF8(msg[:maxRefusalText], "") + "…"
	}
	rep, anchor := study.UploadReport{Refused: msg}, "#upload"
	if gold {
		rep, anchor = study.UploadReport{GoldRefused: msg}, "#gold"
	}
	id, err := s.store.SaveUploadReport(r.Context(), st.ID, rep)
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?upload="+id+anchor, http.StatusSeeOther)
	return nil
}

// expandLimit bounds the bytes unpacked from an upload's zips: twice the
// upload limit, and no more than an upload may store (ItemLimits), so
// entries that could not be stored are not read either.
func (s *Server) expandLimit() int64 {
	if m := s.cfg.ItemLimits.MaxUploadBytes; m > 0 {
		return min(2*s.cfg.MaxUploadBytes, m)
	}
	return 2 * s.cfg.MaxUploadBytes
}

// checkUpload checks one spooled file: a zip archive (recognised by its
// content) is unpacked reading at most expandLimit bytes from it; anything
// else must be an image or a sound (checkItem). It returns how many bytes
// it unpacked.
func (s *Server) checkUpload(name string, sec *io.SectionReader, expandLimit int64, lim avfile.Limits) ([]media.Image, []media.Rejection, int64) {
	size := sec.Size()
	if size == 0 {
		return nil, []media.Rejection{{Name: name, Reason: "empty file"}}, 0
	}
	head := make([]byte, 512)
	n, _ := sec.ReadAt(head, 0)
	head = head[:n]
	if media.IsZip(head) {
		return media.ReadZip(name, sec, size, media.ZipLimits{
			MaxImageBytes: max(s.cfg.MaxImageBytes, lim.MaxBytes, s.videoLimits().MaxBytes), MaxEntries: s.cfg.MaxUploadFiles, MaxExpanded: max(expandLimit, 1),
			Check: func(entry string, data []byte) (media.Image, error) {
				return s.checkItem(entry, data[:min(len(data), 512)], bytes.NewReader(data), int64(len(data)), func() ([]byte, error) { return data, nil }, lim)
			}})
	}
	read := func() ([]byte, error) {
		data := make([]byte, size)
		_, err := sec.ReadAt(data, 0)
		return data, err
	}
	im, err := s.checkItem(name, head, io.NewSectionReader(sec, 0, size), size, read, lim)
	if err != nil {
		return nil, []media.Rejection{{Name: name, Reason: err.Error()}}, 0
	}
	return []media.Image{im.Spooled(read)}, nil, 0
}

// soundExts are the file name endings of the sounds an upload accepts.
// The name never makes a file a sound (the content does); it only says
// that one whose content is an image was meant as a sound, and is
// refused rather than taken as an image.
var soundExts = map[string]bool{".wav": true, ".mp3": true, ".ogg": true, ".oga": true, ".opus": true, ".flac": true, ".m4a": true}

// videoExts are the file name endings of the videos an upload accepts;
// as soundExts, they only say what a file was meant as.
var videoExts = map[string]bool{".mp4": true, ".m4v": true, ".webm": true}

// soundLimits bound a sound uploaded to st (issue 29): avfile's defaults
// but the study's longest sound.
func soundLimits(st study.Study) avfile.Limits {
	lim := avfile.DefaultAudio()
	if st.SoundMaxSeconds > 0 {
		lim.MaxDuration = time.Duration(st.SoundMaxSeconds) * time.Second
	}
	return lim
}

// videoLimits bound an uploaded video (issue 29; no study sets its own yet).
func (s *Server) videoLimits() avfile.Limits { return avfile.DefaultVideo() }

// checkItem checks one file of an upload, head its first bytes and r its
// content (size bytes) read as a stream: an image (media.Check, with the
// bytes read), a sound or a video (avfile's probe on the stream, the kind
// and type found from the content). A file that is none of them is
// refused as not an image, unless its name says it is a sound or a video:
// the probe's reason then, which for a name that says which (.mp3, .mp4)
// is that kind's probe's (a PNG named .mp4 is "not a video").
// A sound is bounded by lim (the study's longest sound, soundLimits).
func (s *Server) checkItem(name string, head []byte, r io.Reader, size int64, read func() ([]byte, error), lim avfile.Limits) (media.Image, error) {
	_, _, isImage := media.Sniff(head)
	ext := strings.ToLower(path.Ext(name))
	meantSound, meantVideo := soundExts[ext], videoExts[ext]
	if isImage && !meantSound && !meantVideo {
		if size > s.cfg.MaxImageBytes {
			return media.Image{}, errors.New(media.TooLarge(size, s.cfg.MaxImageBytes))
		}
		data, err := read()
		if err != nil {
			return media.Image{}, fmt.Errorf("cannot be read back: %w", err)
		}
		return media.Check(name, data, s.cfg.MaxImageBytes)
	}
	if err := media.CheckFileName(name); err != nil {
		return media.Image{}, err
	}
	var info avfile.Info
	var err error
	switch {
	case meantSound:
		info, err = avfile.ProbeAudio(r, size, lim)
	case meantVideo:
		info, err = avfile.ProbeVideo(r, size, s.videoLimits())
	default:
		// Either kind, the content deciding: each kind's byte limit, the
		// longer of the two durations, then the kind's own duration.
		video := s.videoLimits()
		info, err = avfile.Probe(r, size, avfile.Limits{MaxDuration: max(lim.MaxDuration, video.MaxDuration)})
		if err == nil {
			limit := video.MaxDuration
			if info.Kind == avfile.Audio {
				limit = lim.MaxDuration
			}
			if info.Duration > limit {
				return media.Image{}, fmt.Errorf("lasts %s, the study's limit is %s", avfile.Seconds(info.Duration), avfile.Seconds(limit))
			}
		}
	}
	if err != nil {
		if avfile.ReasonOf(err) == avfile.Unrecognised && !meantSound && !meantVideo {
			// Neither: the image check's reason, which names what the
			// first bytes are (or the size, checked first for images).
			if size > s.cfg.MaxImageBytes {
				return media.Image{}, errors.New(media.TooLarge(size, s.cfg.MaxImageBytes))
			}
			_, err := media.Check(name, head, 0)
			return media.Image{}, err
		}
		return media.Image{}, err
	}
	data, err := read()
	if err != nil {
		return media.Image{}, fmt.Errorf("cannot be read back: %w", err)
	}
	if info.Kind == avfile.Video {
		return media.Video(name, data, info.MIME, info.Width, info.Height)
	}
	return media.Sound(name, data, info.MIME)
}

// spool is a temporary file holding an upload's files one after the other,
// so that the memory an upload takes does not grow with its size.
type spool struct {
	f    *os.File
	size int64
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "closer-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	return &spool{f: f}, nil
}

func (sp *spool) Close() {
	sp.f.Close()
	os.Remove(sp.f.Name())
}

// add copies r to the end of the spool and returns the part it wrote.
func (sp *spool) add(r io.Reader) (*io.SectionReader, error) {
	start := sp.size
	n, err := io.Copy(sp.f, r)
	sp.size += n
	if err != nil {
		// The spool's end is where the next file starts.
		if _, serr := sp.f.Seek(sp.size, io.SeekStart); serr != nil {
			return nil, serr
		}
		return nil, err
	}
	return io.NewSectionReader(sp.f, start, n), nil
}

// maxFormField bounds a text field of a multipart upload, maxFormFields
// their number and maxFormFieldsTotal their sum: the forms have two or
// three short ones (slug, title), and 7,800 distinct fields of 64 KiB
// each once held 700 MiB (issue 24).
const (
	maxFormField       = 64 << 10
	maxFormFields      = 32
	maxFormFieldsTotal = 256 << 10
)

// readMultipart reads a multipart/form-data request as a stream, bounded by
// MaxUploadBytes: each file of the field fileField is written to sp and
// passed to onFile (in the order sent), text fields are returned (at most
// maxFormFields of them, maxFormField bytes each and maxFormFieldsTotal in
// all), and files in other fields are skipped. An error from onFile stops
// the reading. The request holds no database slot while its body arrives
// (offSlot), and the body must keep arriving at the minimum rate
// (Config.TransferMinBytes per TransferWindow) or the connection is cut.
func (s *Server) readMultipart(w http.ResponseWriter, r *http.Request, sp *spool, fileField string,
	onFile func(name string, sec *io.SectionReader) error) (map[string]string, error) {
	var fields map[string]string
	err := s.offSlot(r, func() error {
		var err error
		fields, err = s.readParts(w, r, sp, fileField, onFile)
		return err
	})
	return fields, err
}

// readParts is readMultipart's reading.
func (s *Server) readParts(w http.ResponseWriter, r *http.Request, sp *spool, fileField string,
	onFile func(name string, sec *io.SectionReader) error) (map[string]string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badRequest("unreadable upload (multipart/form-data expected): " + err.Error())
	}
	fields := map[string]string{}
	fieldBytes := 0
	current := "" // the file being read, for the messages
	fail := func(err error) (map[string]string, error) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			where := ""
			if current != "" {
				where = " (it reached the limit in " + current + ")"
			}
			return nil, &httpError{status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("the upload is larger than %s%s; nothing was added: split it", media.HumanBytes(s.cfg.MaxUploadBytes), where)}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, &httpError{status: http.StatusRequestTimeout,
				msg: fmt.Sprintf("the upload arrived slower than %s per %s; nothing was added", media.HumanBytes(int64(s.cfg.TransferMinBytes)), s.cfg.TransferWindow)}
		}
		return nil, badRequest("unreadable upload: " + err.Error())
	}
	for parts := 0; ; parts++ {
		if parts > s.cfg.MaxUploadFiles {
			return nil, &httpError{status: http.StatusUnprocessableEntity,
				msg: fmt.Sprintf("the upload has more than %d parts; nothing was added: split it", s.cfg.MaxUploadFiles)}
		}
		p, err := mr.NextPart()
		if err == io.EOF {
			return fields, nil
		}
		if err != nil {
			return fail(err)
		}
		current = p.FileName()
		switch {
		case current == "" && p.FormName() != fileField:
			b, err := io.ReadAll(io.LimitReader(p, maxFormField+1))
			if err != nil {
				return fail(err)
			}
			if len(b) > maxFormField {
				return nil, badRequest(fmt.Sprintf("the field %q is longer than %s", p.FormName(), media.HumanBytes(maxFormField)))
			}
			if fieldBytes += len(b); fieldBytes > maxFormFieldsTotal {
				return nil, &httpError{status: http.StatusRequestEntityTooLarge,
					msg: fmt.Sprintf("the upload's text fields hold more than %s in all; nothing was added", media.HumanBytes(maxFormFieldsTotal))}
			}
			if _, seen := fields[p.FormName()]; !seen && len(fields) == maxFormFields {
				return nil, &httpError{status: http.StatusRequestEntityTooLarge,
					msg: fmt.Sprintf("the upload has more than %d text fields; nothing was added", maxFormFields)}
			}
			fields[p.FormName()] = string(b)
		case current == "" || p.FormName() != fileField:
			// A file input left empty, or a field this form does not have.
			if _, err := io.Copy(io.Discard, p); err != nil {
				return fail(err)
			}
		default:
			sec, err := sp.add(p)
			if err != nil {
				if errors.Is(err, os.ErrClosed) || isDiskError(err) {
					return nil, fmt.Errorf("spool upload: %w", err)
				}
				return fail(err)
			}
			if err := onFile(current, sec); err != nil {
				return nil, err
			}
		}
		p.Close()
	}
}

// isDiskError reports whether err came from writing the spool file rather
// than from reading the request.
func isDiskError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}
