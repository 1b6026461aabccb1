package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// setRetention sets how many days after the study closes its
// participants' identifying fields are blanked (POST
// /admin/studies/{slug}/retention, retention_days; empty: kept; issue 30).
func (s *Server) setRetention(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	days := 0
	if t := strings.TrimSpace(r.PostForm.Get("retention_days")); t != "" {
		if days, err = strconv.Atoi(t); err != nil || days <= 0 {
			days = -1
		}
	}
	err = s.store.SetRetention(r.Context(), st.ID, days)
	if collect.KindOf(err) == study.KindInvalid {
		v, verr := s.eraseView(r.Context(), st)
		if verr != nil {
			return verr
		}
		v.Error = userMessage(err)
		return s.render(w, r, http.StatusUnprocessableEntity, templates.ErasePage(v))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"/participants/erase?msg=saved", http.StatusSeeOther)
	return nil
}
