package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/study"
)

// apiItem is an item in the JSON API.
type apiItem struct {
	Index    int    `json:"index"`
	Label    string `json:"label"`
	ImageURL string `json:"image_url"`
}

type apiQuestion struct {
	QuestionID string `json:"question_id"`
	// Format is the question's shape (study.Format): "triplet", an
	// anchor and two options, left and right; Options are the items to
	// choose from in display order, whatever the format.
	Format   string    `json:"format"`
	Anchor   apiItem   `json:"anchor"`
	Options  []apiItem `json:"options"`
	Left     apiItem   `json:"left"`
	Right    apiItem   `json:"right"`
	Answered int       `json:"answered"`
	Total    int       `json:"total"`
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
	item := func(it study.ItemRef) apiItem {
		return apiItem{Index: it.Index, Label: it.Label, ImageURL: s.imageURL(it.SHA256)}
	}
	q := pr.Question
	options := make([]apiItem, len(q.Options))
	for i, o := range q.Options {
		options[i] = item(o)
	}
	v := apiQuestion{
		QuestionID: q.ID, Format: string(q.Format), Anchor: item(q.Anchor), Options: options, Left: item(q.Options[0]), Right: item(q.Options[1]),
		Answered: pr.Answered, Total: pr.Total, CantDecide: pr.CantDecide,
	}
	if a := pr.Ahead; a != nil {
		for _, it := range a.Items() {
			v.AheadImages = append(v.AheadImages, s.imageURL(it.SHA256))
		}
	}
	return v
}
