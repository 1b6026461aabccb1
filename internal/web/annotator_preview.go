package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// mturkPreview shows an MTurk study while a worker previews its HIT (GET
// /s/{slug} with assignmentId ASSIGNMENT_ID_NOT_AVAILABLE, or none): the
// instructions and an example question made of the study's first three
// images. It creates nothing: no participant, no question.
func (s *Server) mturkPreview(w http.ResponseWriter, r *http.Request, st study.Study) error {
	items, err := s.store.ExampleItems(r.Context(), st.ID, 3)
	if err != nil {
		return err
	}
	v := templates.MTurkPreview{Study: st, Instructions: s.texts.render(st.Instructions), L: s.studyTexts(r, st)}
	if len(items) == 3 {
		img := func(it study.Item) templates.Image { return itemFace(itemRef(it)) }
		v.Example = &templates.ExampleQuestion{Anchor: img(items[0]), Left: img(items[1]), Right: img(items[2]),
			TextChars: longestText(items)}
	}
	return s.render(w, r, http.StatusOK, templates.MTurkPreviewPage(v))
}
