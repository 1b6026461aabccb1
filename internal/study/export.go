package study

import (
	"encoding/json"
	"time"
)

// exportBaseColumns are the columns both exports begin with.
var exportBaseColumns = []string{
	"study", "question_id", "participant", "external_id", "anchor", "closer", "farther",
	"anchor_label", "closer_label", "farther_label", "left", "right", "design",
	"response_ms", "asked_at", "answered_at", "kind",
}

// ExportColumns are the columns of triplets.csv, in order. kind is
// "design" (a question of the participant's arm's design, random included,
// or an imported answer), "fallback" (a random question a design asked
// when it had nothing open) or "heldout" (a held-out question: a random
// comparison kept out of every design and fit, the study's test set).
// arm is the name of the participant's arm (a study without arms: its
// design). New columns only ever go at the end.
var ExportColumns = append(append([]string{}, exportBaseColumns...), "arm")

// AllAnswersColumns are the columns of the all-answers export: triplets.csv's
// first 17, then whether the question was skipped ("can't decide": closer
// and farther empty) and, for catch and repeat trials (kind catch,
// repeat), whether the expected option was chosen, then the arm; then
// the question's format (issue 27: triplet, odd-one-out or rank), and for
// a trial of another format than the triplet its options (the items
// shown, in display order) and choices (the items chosen, in order), item
// indices separated by spaces. Such a trial is one row: anchor is a rank
// trial's query (empty for odd-one-out), closer, farther, left and right
// are empty; triplets.csv has the triplets it derives instead. Last,
// listen_ms (issue 29): how long any sound of the question was playing
// before the answer, empty when unknown (no script, an older answer, a
// catch or repeat trial, a skip).
var AllAnswersColumns = append(append([]string{}, exportBaseColumns...), "skipped", "correct", "arm", "format", "options", "choices", "listen_ms")

// PreviewColumn is the last column of an export that includes preview
// sessions (ExportOptions.Previews): "true" on a preview's row.
const PreviewColumn = "preview"

// ExportOptions choose the rows of an answers export.
type ExportOptions struct {
	Excluded bool // the answers of excluded participants too
	// Previews: the answers of researchers' preview sessions too, with
	// PreviewColumn saying which rows are theirs (issue 26); left out by
	// default, as from every result.
	Previews bool
	All      bool // every answer (AllAnswersColumns), not only triplets
	// NoIdentifying leaves the external_id column empty: the export of an
	// account that may not see identifying data (a viewer, issue 30).
	NoIdentifying bool
}

// SnapshotItem is an item with its image: the row ImportStudy takes back.
type SnapshotItem = ImportItem

// SnapshotParticipant is a participant.
type SnapshotParticipant struct {
	PublicID                   string
	ExternalID, CompletionCode string // "" for none
	CreatedAt                  time.Time
	CompletedAt, ExcludedAt    *time.Time
	Arm                        int // their arm (0 in a study without arms)
}

// SnapshotAnswer is an answer with its question.
type SnapshotAnswer struct {
	QuestionID                           string
	Participant                          string // the participant's public id
	Anchor, Left, Right, Closer, Farther int
	Design                               string // the question's
	ResponseMS                           *int
	AskedAt, AnsweredAt                  time.Time // the question's issue and the answer's time
	// QuestionAnchor is the question's anchor, its key with Left and
	// Right (questions.anchor): Anchor's but for an odd-one-out trial,
	// whose answer's Anchor is its first derived triplet's.
	QuestionAnchor int
	// Options and Choices are a trial's items shown in display order and
	// chosen in order (questions.options, answers.choices; issue 27); nil
	// for a triplet.
	Options, Choices []int
}

// SnapshotReader is one study as of one moment, as the store gives it to
// an export (store.Store.ExportSnapshot): every method reads in the same
// transaction, so the parts agree with each other whatever is written
// meanwhile. It is valid only within the function it is given to.
type SnapshotReader interface {
	Study() Study
	Settings() (RecomputeSettings, error)
	DesignConfig() (json.RawMessage, error) // as stored (studies.design_config)
	Items(f func(SnapshotItem) error) error
	Participants(f func(SnapshotParticipant) error) error
	Answers(f func(SnapshotAnswer) error) error
}
