package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// eraseForm shows the form that deletes a participant's data at their
// request (GET /admin/studies/{slug}/participants/erase; issue 30).
func (s *Server) eraseForm(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	v, err := s.eraseView(r.Context(), st)
	if err != nil {
		return err
	}
	v.Saved = r.URL.Query().Get("msg") == "saved"
	return s.render(w, r, http.StatusOK, templates.ErasePage(v))
}

// eraseView is the data-rights page of the study, with its retention.
func (s *Server) eraseView(ctx context.Context, st study.Study) (templates.Erase, error) {
	v := templates.Erase{Study: st, Scope: "study"}
	var err error
	v.RetentionDays, v.ClosedAt, err = s.store.Retention(ctx, st.ID)
	return v, err
}

// eraseParticipant previews (action=preview) or carries out (action=erase,
// confirm=yes) the deletion of the participants with the typed external
// or public id, from this study (scope=study) or from every study the
// account may change (scope=all) (POST
// /admin/studies/{slug}/participants/erase). The audit trail records the
// deletion without the id; the results of every study that lost answers
// are recomputed.
func (s *Server) eraseParticipant(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	f := r.PostForm
	v, err := s.eraseView(r.Context(), st)
	if err != nil {
		return err
	}
	v.ID, v.Scope = strings.TrimSpace(f.Get("id")), f.Get("scope")
	if v.Scope != "all" {
		v.Scope = "study"
	}
	if v.ID == "" {
		v.Error = "type the participant's external id (such as their Prolific id) or public id"
		return s.render(w, r, http.StatusUnprocessableEntity, templates.ErasePage(v))
	}
	studies, err := s.erasureStudies(r.Context(), st, v.Scope == "all")
	if err != nil {
		return err
	}
	erase := f.Get("action") == "erase"
	if erase && f.Get("confirm") != "yes" {
		v.Error, erase = "tick the box to confirm the deletion", false
	}
	if !erase {
		if v.Preview, err = s.store.ErasurePreview(r.Context(), studies, v.ID); err != nil {
			return err
		}
		v.Previewed = true
		noteAudit(r.Context(), "previewed a participant's deletion", 0, "")
		status := http.StatusOK
		if v.Error != "" {
			status = http.StatusUnprocessableEntity
		}
		return s.render(w, r, status, templates.ErasePage(v))
	}
	if v.Done, err = s.erase(r.Context(), studies, v.ID); err != nil {
		return err
	}
	v.Erased = true
	return s.render(w, r, http.StatusOK, templates.ErasePage(v))
}

// erasureStudies are the studies a deletion may reach: the request's
// study, or every study the account (and its token) may change.
func (s *Server) erasureStudies(ctx context.Context, st study.Study, all bool) ([]int64, error) {
	if !all {
		return []int64{st.ID}, nil
	}
	a := adminFrom(ctx)
	tok := tokenFrom(ctx)
	roles, every, err := s.accounts.VisibleStudies(ctx, a)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if every {
		sts, err := s.store.ListStudies(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range sts {
			ids = append(ids, x.Study.ID)
		}
	} else {
		for id, role := range roles {
			if role >= study.RoleEditor {
				ids = append(ids, id)
			}
		}
	}
	out := ids[:0]
	for _, id := range ids {
		if tok.refuse(id, needEditor) == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// erase deletes the participants, recomputes the results of the studies
// that lost answers and notes the deletion for the audit trail (counts and
// studies, never the id).
func (s *Server) erase(ctx context.Context, studies []int64, id string) ([]study.Erasure, error) {
	done, err := s.store.EraseParticipant(ctx, studies, id)
	if err != nil {
		return nil, err
	}
	var parts []string
	for _, e := range done {
		parts = append(parts, fmt.Sprintf("%s: %d participant(s), %d answer(s)", e.StudySlug, e.Participants, e.Answers))
		if e.Answers > 0 && s.cfg.Jobs != nil {
			if _, _, err := s.cfg.Jobs.Enqueue(ctx, e.StudyID); err != nil {
				return done, err
			}
		}
	}
	detail := "deleted a participant's data at their request (id not recorded): "
	if len(parts) == 0 {
		detail += "nobody matched"
	} else {
		detail += strings.Join(parts, "; ")
	}
	noteAudit(ctx, detail, 0, "")
	return done, nil
}
