package http

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// participantsShown is how many participants the study page lists.
const participantsShown = 50

// studyPage fills the study page's view.
func (s *Server) studyPage(r *http.Request, st collect.Study) (templates.StudyPage, error) {
	stats, err := s.store.StudyStats(r.Context(), st.ID)
	if err != nil {
		return templates.StudyPage{}, err
	}
	items, err := s.store.ListItems(r.Context(), st.ID)
	if err != nil {
		return templates.StudyPage{}, err
	}
	ps, err := s.store.ListParticipants(r.Context(), st.ID, participantsShown)
	if err != nil {
		return templates.StudyPage{}, err
	}
	v := templates.StudyPage{Study: st, Stats: stats, Participants: ps, PublicURL: s.publicURL("/s/" + st.Slug)}
	ds, err := s.store.DesignStatusOf(r.Context(), st)
	if err != nil {
		return templates.StudyPage{}, err
	}
	v.Design = &ds
	for _, it := range items {
		v.Items = append(v.Items, templates.Image{Index: it.Index, Label: it.Label, URL: "/img/" + it.SHA256})
	}
	return v, nil
}

// showStudy is a study's page for the researcher (GET /admin/studies/{slug}).
func (s *Server) showStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	v, err := s.studyPage(r, st)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.StudyShowPage(v))
}
