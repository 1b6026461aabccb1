package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

// apiItem is an item in the JSON API.
type apiItem struct {
	Index int    `json:"index"`
	Label string `json:"label"`
	// Kind is "image" (ImageURL its picture) or "text" (Text its words,
	// to be shown as text, never as markup).
	Kind     string `json:"kind"`
	ImageURL string `json:"image_url,omitempty"`
	Text     string `json:"text,omitempty"`
	// Role is what the item is in the question: "anchor", "left" or
	// "right" (a triplet), "item" (odd-one-out), "query" or "reference"
	// (rank).
	Role string `json:"role,omitempty"`
}

type apiQuestion struct {
	QuestionID string `json:"question_id"`
	// Format is the question's shape (study.Format): "triplet", an
	// anchor and two options, left and right; "odd-one-out", three items
	// and no anchor; "rank", a query (Anchor) and N references. Options
	// are the items to choose from in display order, whatever the
	// format, each with its role; Choose is how many an answer chooses,
	// in order (its "choices").
	Format  string    `json:"format"`
	Anchor  *apiItem  `json:"anchor,omitempty"`
	Options []apiItem `json:"options"`
	Choose  int       `json:"choose"`
	// Left and Right are a triplet's options (its answer may name the
	// closer one as "closer").
	Left     *apiItem `json:"left,omitempty"`
	Right    *apiItem `json:"right,omitempty"`
	Answered int      `json:"answered"`
	Total    int      `json:"total"`
	// AheadImages are the image URLs of the next question, already issued:
	// a client fetches them now, so that question shows at once.
	AheadImages []string `json:"ahead_images,omitempty"`
	// CantDecide: the study takes {"skip": true} as an answer.
	CantDecide bool `json:"cant_decide,omitempty"`
}

type apiDone struct {
	Done           bool   `json:"done"`
	CompletionCode string `json:"completion_code"`
}

// apiParticipant authenticates the participant's bearer token.
func (s *Server) apiParticipant(r *http.Request) (study.Participant, error) {
	token, ok := bearer(r)
	if !ok {
		return study.Participant{}, unauthorized("send the participant token as Authorization: Bearer <token>")
	}
	return s.store.AuthenticateParticipant(r.Context(), token)
}

// apiNext returns the participant's open question, issuing one if needed
// (GET /api/v1/studies/{slug}/next), or {"done": true, "completion_code"}.
func (s *Server) apiNext(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	p, err := s.apiParticipant(r)
	if err != nil {
		return err
	}
	if p.StudyID != st.ID {
		return &httpError{status: http.StatusForbidden, msg: "this participant token belongs to another study"}
	}
	pr, err := s.store.Next(r.Context(), p.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.apiProgress(pr))
}

// apiProgress is the JSON of a participant's next question, or of their
// being done (pr has one or the other).
func (s *Server) apiProgress(pr study.Progress) any {
	if pr.Done {
		return apiDone{Done: true, CompletionCode: pr.CompletionCode}
	}
	item := func(it study.ItemRef, role string) apiItem {
		if it.IsText() {
			return apiItem{Index: it.Index, Label: it.Label, Kind: string(study.ItemText), Text: it.Text, Role: role}
		}
		return apiItem{Index: it.Index, Label: it.Label, Kind: string(study.ItemImage), ImageURL: s.imageURL(it.SHA256), Role: role}
	}
	q := pr.Question
	v := apiQuestion{QuestionID: q.ID, Format: string(q.Format), Options: make([]apiItem, len(q.Options)),
		Choose: 1, Answered: pr.Answered, Total: pr.Total, CantDecide: pr.CantDecide}
	switch q.Format {
	case study.FormatOddOneOut:
		for i, o := range q.Options {
			v.Options[i] = item(o, "item")
		}
	case study.FormatRank:
		anchor := item(q.Anchor, "query")
		v.Anchor, v.Choose = &anchor, q.Choose
		for i, o := range q.Options {
			v.Options[i] = item(o, "reference")
		}
	default:
		anchor, left, right := item(q.Anchor, "anchor"), item(q.Options[0], "left"), item(q.Options[1], "right")
		v.Anchor, v.Left, v.Right = &anchor, &left, &right
		v.Options[0], v.Options[1] = left, right
	}
	if a := pr.Ahead; a != nil {
		for _, it := range a.Items() {
			if !it.IsText() {
				v.AheadImages = append(v.AheadImages, s.imageURL(it.SHA256))
			}
		}
	}
	return v
}
