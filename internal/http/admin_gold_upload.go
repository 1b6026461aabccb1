package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/templates"
)

// uploadGold replaces the study's gold triplets, asked as catch trials,
// with those of an uploaded CSV (POST /admin/studies/{slug}/gold, field
// "file"; anchor,closer,farther by item label). A file with any bad row is
// refused whole with its rows' reasons (422) and nothing is stored; a file
// with a header and no rows clears them.
func (s *Server) uploadGold(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	up, err := s.receiveFile(w, r)
	if err == nil {
		defer up.Close()
		err = func() error {
			items, err := s.store.ListItems(r.Context(), st.ID)
			if err != nil {
				return err
			}
			labels := make([]string, len(items))
			for _, it := range items {
				labels[it.Index] = it.Label
			}
			gold, err := studyfile.ReadGold(up.file, up.file.Size(), labels)
			if err != nil {
				return named(up.name, err)
			}
			return s.store.SetGoldTriplets(r.Context(), st.ID, gold)
		}()
	}
	if status, msg := classify(err); err != nil && status < 500 {
		v, perr := s.studyPage(r, st)
		if perr != nil {
			return perr
		}
		v.Error = "Gold triplets not stored: " + msg
		return s.render(w, r, status, templates.StudyShowPage(v))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?msg=gold", http.StatusSeeOther)
	return nil
}
