package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/studyfile"
)

// uploadGold replaces the study's gold triplets, asked as catch trials,
// with those of an uploaded CSV (POST /admin/studies/{slug}/gold, field
// "file"; anchor,closer,farther by item label). A file with any bad row is
// refused whole and nothing is stored; as after an image upload, the
// refusal (the file's name and its rows' reasons) is kept as an upload
// report and the request ends in a redirect to the study page that shows
// it, so a reload never sends the file again. So does an upload that
// cannot be received (no file, two files, too large, not multipart). A
// file with a header and no rows clears them.
func (s *Server) uploadGold(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	up, err := s.receiveFile(w, r)
	if err != nil {
		return s.refuseUpload(w, r, st, err, true)
	}
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
	if err != nil {
		return s.refuseUpload(w, r, st, err, true)
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?msg=gold", http.StatusSeeOther)
	return nil
}
