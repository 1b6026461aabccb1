package web

import (
	"net/http"
	"strings"
	"unicode/utf8"

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
	img := itemFace
	v := templates.Question{
		Slug: st.Slug, Title: st.Title, QuestionID: q.ID,
		Anchor: img(q.Anchor), Left: img(q.Options[0]), Right: img(q.Options[1]),
		Answered: pr.Answered, Total: pr.Total, MinViewMS: st.MinViewMS, PlayToEnd: st.PlayToEnd, CantDecide: pr.CantDecide,
		ParticipantToken: pageToken(r, st), Preview: preview, L: s.studyTexts(r, st), Layout: st.Layout,
		Format: q.Format, TextChars: q.TextChars,
	}
	if q.Format == study.FormatOddOneOut || q.Format == study.FormatRank {
		for _, it := range q.Options {
			v.Items = append(v.Items, img(it))
		}
		v.Choose = q.Choose
	}
	if a := pr.Ahead; a != nil {
		for _, it := range a.Items() {
			// A text comes with its page; a sound or a video loads with
			// its own (preload), not as the image a prefetch link names.
			if it.Kind != study.ItemText && it.Kind != study.ItemAudio && it.Kind != study.ItemVideo {
				v.Ahead = append(v.Ahead, img(it).URL)
			}
		}
	}
	if strings.TrimSpace(st.Instructions) != "" {
		v.Instructions = s.texts.render(st.Instructions)
	}
	return s.render(w, r, http.StatusOK, templates.QuestionPage(v))
}

// itemFace is an item as a participant's page shows it: its image's URL
// (content-addressed, GET /img/{sha256}), a sound's or video's URL (the same route),
// or a text item's text, which the page writes escaped.
func itemFace(it study.ItemRef) templates.Image {
	switch it.Kind {
	case study.ItemText:
		return templates.Image{Index: it.Index, Label: it.Label, Kind: study.ItemText, Text: it.Text}
	case study.ItemAudio:
		return templates.Image{Index: it.Index, Label: it.Label, Kind: study.ItemAudio, URL: "/img/" + it.SHA256}
	case study.ItemVideo:
		return templates.Image{Index: it.Index, Label: it.Label, Kind: study.ItemVideo, URL: "/img/" + it.SHA256}
	}
	return templates.Image{Index: it.Index, Label: it.Label, Kind: study.ItemImage, URL: "/img/" + it.SHA256}
}

// itemRef is what a question shows of a stored item.
func itemRef(it study.Item) study.ItemRef {
	return study.ItemRef{Index: it.Index, Label: it.Label, SHA256: it.SHA256, Kind: it.Kind, Text: it.Text}
}

// longestText is the length in characters of the longest text item of
// items (0: none), which sizes a page's texts (templates.TextFitClass).
func longestText(items []study.Item) int {
	n := 0
	for _, it := range items {
		n = max(n, utf8.RuneCountInString(it.Text))
	}
	return n
}
