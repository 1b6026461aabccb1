package study

import (
	"encoding/json"
	"fmt"
	"time"
)

// RowSource is a stream of parsed rows that an import copies into the
// database as they are read (COPY pulls one row at a time, so memory does
// not grow with the file). Next advances to the next row and reports false
// at the end or when reading stopped; Value is the current row; Err is why
// reading stopped before the end, or nil. An import returns Err's error as
// it is, in preference to what the database made of the rows.
type RowSource[T any] interface {
	Next() bool
	Value() T
	Err() error
}

// ImportItem is an item to import.
type ImportItem struct {
	Index               int
	Kind                ItemKind // "" is an image
	Text                string   // a text item's text (checked as an upload's)
	Label, FileName     string
	ContentType, SHA256 string // "" and a unique placeholder for a label-only item
	Width, Height       int
	Data                []byte // nil for a label-only item
}

// ImportParticipant is a participant to import. Key is its id in the
// imported file (unique within the import); its answers name it by Key.
// The participant gets a new public id and a new (unusable) token.
type ImportParticipant struct {
	Key                        string
	ExternalID, CompletionCode string // "" for none
	CreatedAt                  time.Time
	CompletedAt, ExcludedAt    *time.Time
	// Arm is the participant's arm: below the number of arms the study
	// was given (SetArms), 0 in a study without arms.
	Arm int
}

// ImportAnswer is an answer to import, with the question it answers (the
// question gets a new id).
type ImportAnswer struct {
	Line                                 int    // where the answer is in its file, for messages
	Participant                          string // an ImportParticipant's Key
	Anchor, Left, Right, Closer, Farther int
	Design                               string
	ResponseMS                           *int
	AskedAt, AnsweredAt                  time.Time
	// Options and Choices make the answer a trial of another format than
	// the triplet (issue 27): the items shown in display order and those
	// chosen in order (questions.options, answers.choices); Anchor, Left
	// and Right are then its key and Closer, Farther with Anchor its
	// first derived triplet. Nil for a triplet.
	Options, Choices []int
	// QuestionAnchor, when not nil, is the question's anchor (its key with
	// Left and Right) where it differs from the answer's Anchor: an
	// odd-one-out trial's answer keeps its first derived triplet, whose
	// anchor need not be the question's. Nil: Anchor.
	QuestionAnchor *int
}

// RepeatedRowError is an imported row the database refused because it
// repeats an earlier one: an item's index or image (Rows "items"), a
// participant's key ("participants") or a comparison of one participant
// ("questions"). It is a user error (KindInvalid); a format may word it for
// its file.
type RepeatedRowError struct {
	Rows   string
	Detail string // PostgreSQL's, e.g. Key (bundle_id)=(p1) already exists.
}

func (e *RepeatedRowError) Error() string {
	return fmt.Sprintf("%s: a row repeats an earlier one (%s)", e.Rows, e.Detail)
}

// Unwrap makes the error a user error for KindOf and AsError.
func (e *RepeatedRowError) Unwrap() error { return &Error{Kind: KindInvalid, Msg: e.Error()} }

// UnknownParticipantError is an imported answer whose participant key no
// imported participant has (the first such answer in file order). It is a
// user error (KindInvalid); a format may word it for its file.
type UnknownParticipantError struct {
	Line int
	Key  string
}

func (e *UnknownParticipantError) Error() string {
	return fmt.Sprintf("line %d: unknown participant %q", e.Line, e.Key)
}

// Unwrap makes the error a user error for KindOf and AsError.
func (e *UnknownParticipantError) Unwrap() error { return &Error{Kind: KindInvalid, Msg: e.Error()} }

// ImportWriter stores one imported study in one transaction, as the store
// gives it to an import (store.Store.ImportStudy): the study first, then
// its settings, items, participants and answers; nothing is stored unless
// the whole import succeeds.
type ImportWriter interface {
	// SlugTaken reports whether a study (of any status) has the slug.
	SlugTaken(slug string) (bool, error)
	CreateStudy(in StudyInput) (Study, error)
	Study() Study
	SetRecomputeSettings(rs RecomputeSettings) error
	SetDesignConfig(raw json.RawMessage) error
	SetArms(arms []Arm) error
	CopyItems(rows RowSource[ImportItem]) (int, error)
	CopyParticipants(rows RowSource[ImportParticipant]) (int, error)
	CopyAnswers(rows RowSource[ImportAnswer]) (int, error)
}
