package web

import (
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// question shows the participant's open question, issuing one if needed
// (GET /s/{slug}/q).
func (s *Server) question(w http.ResponseWriter, r *http.Request) error {
	st, p, pr, ok, err := s.annotatorProgress(w, r)
	if !ok || err != nil {
		return err
	}
	if pr.Done {
		http.Redirect(w, r, participantPath(st, pageToken(r, st), "/done"), http.StatusSeeOther)
		return nil
	}
	return s.renderQuestion(w, r, st, pr, p.Preview)
}

// renderQuestion shows the participant's open question pr.Question (on
// MTurk with the page's participant token in the form); a preview
// session's page says it is one.
func (s *Server) renderQuestion(w http.ResponseWriter, r *http.Request, st study.Study, pr study.Progress, preview bool) error {
	q := pr.Question
	img := func(it study.ItemRef) templates.Image {
		return templates.Image{Index: it.Index, Label: it.Label, URL: "/img/" + it.SHA256}
	}
	v := templates.Question{
		Slug: st.Slug, Title: st.Title, QuestionID: q.ID,
		Anchor: img(q.Anchor), Left: img(q.Options[0]), Right: img(q.Options[1]),
		Answered: pr.Answered, Total: pr.Total, MinViewMS: st.MinViewMS, CantDecide: pr.CantDecide,
		ParticipantToken: pageToken(r, st), Preview: preview, L: s.studyTexts(r, st), Layout: st.Layout,
		Format: q.Format,
	}
	if q.Format == study.FormatOddOneOut || q.Format == study.FormatRank {
		for _, it := range q.Options {
			v.Items = append(v.Items, img(it))
		}
		v.Choose = q.Choose
	}
	if a := pr.Ahead; a != nil {
		for _, it := range a.Items() {
			v.Ahead = append(v.Ahead, img(it).URL)
		}
	}
	if strings.TrimSpace(st.Instructions) != "" {
		v.Instructions = s.texts.render(st.Instructions)
	}
	return s.render(w, r, http.StatusOK, templates.QuestionPage(v))
}
