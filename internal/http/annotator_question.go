package http

import (
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/templates"
)

// question shows the participant's open question, issuing one if needed
// (GET /s/{slug}/q).
func (s *Server) question(w http.ResponseWriter, r *http.Request) error {
	st, pr, ok, err := s.annotatorProgress(w, r)
	if !ok || err != nil {
		return err
	}
	if pr.Done {
		http.Redirect(w, r, "/s/"+st.Slug+"/done", http.StatusSeeOther)
		return nil
	}
	return s.renderQuestion(w, r, st, pr)
}

// renderQuestion shows the participant's open question pr.Question.
func (s *Server) renderQuestion(w http.ResponseWriter, r *http.Request, st collect.Study, pr collect.Progress) error {
	q := pr.Question
	img := func(it collect.ItemRef) templates.Image {
		return templates.Image{Index: it.Index, Label: it.Label, URL: "/img/" + it.SHA256}
	}
	v := templates.Question{
		Slug: st.Slug, Title: st.Title, QuestionID: q.ID,
		Anchor: img(q.Anchor), Left: img(q.Left), Right: img(q.Right),
		Answered: pr.Answered, Total: pr.Total, MinViewMS: st.MinViewMS, CantDecide: pr.CantDecide,
	}
	if strings.TrimSpace(st.Instructions) != "" {
		v.Instructions = s.texts.render(st.Instructions)
	}
	return s.render(w, r, http.StatusOK, templates.QuestionPage(v))
}
