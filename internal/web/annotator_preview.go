package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// mturkPreview shows an MTurk study while a worker previews its HIT (GET
// /s/{slug} with assignmentId ASSIGNMENT_ID_NOT_AVAILABLE, or none): the
// instructions and an example question of the study's format made of its
// first items (three; a rank study's query and its N references). It
// creates nothing: no participant, no question.
func (s *Server) mturkPreview(w http.ResponseWriter, r *http.Request, st study.Study) error {
	f := study.MustStudyFormat(st.Format)
	need := 3
	if f.Format == study.FormatRank {
		need = 1 + f.Rank.N
	}
	items, err := s.store.ExampleItems(r.Context(), st.ID, need)
	if err != nil {
		return err
	}
	v := templates.MTurkPreview{Study: st, Instructions: s.texts.render(st.Instructions), L: s.studyTexts(r, st)}
	if len(items) == need {
		faces := make([]templates.Image, need)
		for i, it := range items {
			faces[i] = itemFace(itemRef(it))
		}
		ex := &templates.ExampleQuestion{Format: f.Format, TextChars: longestText(items)}
		switch f.Format {
		case study.FormatOddOneOut:
			ex.Items = faces
		case study.FormatRank:
			ex.Anchor, ex.Items, ex.Choose = faces[0], faces[1:], f.Rank.K
		default:
			ex.Anchor, ex.Left, ex.Right = faces[0], faces[1], faces[2]
		}
		v.Example = ex
	}
	return s.render(w, r, http.StatusOK, templates.MTurkPreviewPage(v))
}
