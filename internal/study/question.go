package study

import (
	"time"

	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// Format is the shape of a question: what it shows, by role, and what an
// answer chooses. Whatever shows, records, exports or simulates a question
// goes through Format and Question, so that a new format is a new value
// here and the cases that switch on it (the store's columns, the page,
// the JSON API, the export, the load generator), not a search for
// "left_idx".
type Format = trial.Format

// FormatTriplet is closer's first format: an anchor and two options shown
// left and right; the participant chooses the option closer to the
// anchor (or, where the study allows it, that they cannot decide).
const FormatTriplet = trial.FormatTriplet

// Question is a question issued to one participant.
type Question struct {
	ID            string
	StudyID       int64
	ParticipantID int64
	Format        Format
	Anchor        ItemRef   // the item the options are compared with
	Options       []ItemRef // the items to choose from, in display order (a triplet: left, right)
	// Choose is how many options an answer chooses, in order (1 but in a
	// rank trial: its K).
	Choose   int
	Design   string
	IssuedAt time.Time
	// TextChars is the length in characters of the study's longest text
	// item (0: the study has none): the page sizes the texts of every
	// question by it (TextFontSize).
	TextChars int
}

// NewTriplet is a triplet question's shape: anchor, then the options left
// and right in display order.
func NewTriplet(anchor, left, right ItemRef) Question {
	return Question{Format: FormatTriplet, Anchor: anchor, Options: []ItemRef{left, right}, Choose: 1}
}

// Items returns every item q shows, the anchor first (none in an
// odd-one-out trial), then the options in display order (e.g. the images
// a client loads ahead).
func (q Question) Items() []ItemRef {
	if q.Format == FormatOddOneOut {
		return append([]ItemRef(nil), q.Options...)
	}
	return append([]ItemRef{q.Anchor}, q.Options...)
}

// OptionIndices returns the item indices of q's options in display order.
func (q Question) OptionIndices() []int {
	out := make([]int, len(q.Options))
	for i, o := range q.Options {
		out[i] = o.Index
	}
	return out
}

// Offers reports whether the item with index i is one of q's options: a
// choice an answer may make.
func (q Question) Offers(i int) bool {
	for _, o := range q.Options {
		if o.Index == i {
			return true
		}
	}
	return false
}

// Progress is a participant's position in a study: their open question, or
// Done with the completion code once they answered all they will be asked.
type Progress struct {
	Question *Question
	Answered int
	Total    int
	// Ahead is the question after Question, already issued and held, so
	// that a client loads its images while Question is on screen; nil for
	// the last question and in a basis study (its open comparisons depend
	// on the answers just given).
	Ahead          *Question
	Done           bool
	CompletionCode string
	// Status is the study's status. An answer taken while the study is
	// paused leaves the participant without a next question, and not
	// done: AnswerNext then returns neither.
	Status string
	// CantDecide: the study takes a skip ("can't decide") as an answer.
	CantDecide bool
}

// Returning is where a participant who comes back to a study stands:
// the answers they gave of Total, and Done with their completion code once
// they finished.
type Returning struct {
	Answered, Total int
	Done            bool
	CompletionCode  string
}

// Comparison is a question before it is issued: which of Left and Right is
// closer to Anchor. Left and Right are in display order.
type Comparison struct {
	Anchor, Left, Right int
	// Format is the question's format ("" or FormatTriplet: a triplet).
	// A trial of another format shows Options, the items in display
	// order (odd-one-out: Anchor, Left and Right in some order; rank: N
	// references, Left and Right among them, Anchor the query); Anchor,
	// Left and Right are its key for the once-per-participant index.
	Format  Format
	Options []int
	Choose  int // a rank trial's K
	// Design is recorded as the question's design; empty means the study's
	// design (a design study records its random fallbacks as DesignFallback).
	Design string
}

// Key returns the comparison's unordered key.
func (c Comparison) Key() triplet.Key { return triplet.QuestionKey(c.Anchor, c.Left, c.Right) }

// MaxResponseMS bounds a reported response time (one day).
const MaxResponseMS = 24 * 60 * 60 * 1000

// MaxListenMS bounds a reported listening time (one hour).
const MaxListenMS = 60 * 60 * 1000

// CheckListenMS checks a reported listening time (AnswerInput.ListenMS).
func CheckListenMS(ms int) error {
	if ms < 0 || ms > MaxListenMS {
		return Errorf(KindInvalid, "listen_ms must be between 0 and %d (one hour)", MaxListenMS)
	}
	return nil
}

// AnswerInput is a participant's answer to a question.
type AnswerInput struct {
	QuestionID string
	Closer     int  // the item index chosen as closer to the anchor
	ResponseMS *int // optional: how long the participant took
	// ListenMS is optional: how long any sound of the question was
	// playing before the answer (issue 29; the question page's script
	// sums it). Kept with a triplet or a trial of another format, not
	// with a catch or repeat trial or a skip.
	ListenMS *int
	// Skip answers "can't decide" (studies that offer it): the question
	// counts as answered, with no triplet; Closer is ignored.
	Skip bool
	// Choices are the items chosen, in the order chosen (issue 27): an
	// odd-one-out trial's odd one, a rank trial's K references, the most
	// similar first; a triplet's closer option as the one choice (then
	// Closer is ignored). Nil: a triplet answered by Closer.
	Choices []int
}
