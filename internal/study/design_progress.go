package study

import (
	"time"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/landmark"
)

// DesignProgress is the progress a design study stores with every answer
// (design_states.progress), so the study page needs no design in memory.
type DesignProgress struct {
	Landmark  *landmark.Progress `json:"landmark,omitempty"`
	Landmarks []int              `json:"landmarks,omitempty"` // the landmark items, ascending
	Basis     *basis.Progress    `json:"basis,omitempty"`
	Active    *ActiveProgress    `json:"active,omitempty"`
	Done      bool               `json:"done"`
}

// ActiveProgress is the active design's progress. insertActiveFallbackSQL
// reads Warmup: keep its JSON name.
type ActiveProgress struct {
	// Answers the design recorded: its warm-up questions' and its pool
	// questions' (fallbacks and held-out questions are not recorded).
	Answers int `json:"answers"`
	// Warmup is the answers the warm-up takes (warm-up per item × items);
	// scored questions start after it.
	Warmup int `json:"warmup"`
	// Refreshes counts the pools installed (ApplyActivePool).
	Refreshes int `json:"refreshes"`
	// PoolSize is the questions of the current pool, PoolLeft the answers
	// they still want.
	PoolSize int `json:"pool_size"`
	PoolLeft int `json:"pool_left"`
}

// DesignStatus is what a study page shows of the design of one arm of a
// study (its only design in a study without arms): its settings, the
// planned size before the first question, its progress after, and the
// share of the arm's answers that came from random fallback questions.
type DesignStatus struct {
	// Arm is the arm's number, ArmName its name (the design's for a study
	// without arms) and Share its share of the participants (1 without
	// arms).
	Arm     int
	ArmName string
	Share   float64
	Design  string
	Config  DesignConfig
	// Stateful reports a landmark, basis or active design.
	Stateful bool
	// Started reports that the design's state exists (the first question
	// was issued); Items is then the number of items it covers.
	Started bool
	Items   int
	// Planned size of a landmark design (before and after it started):
	// Comparisons distinct comparisons, Size = Comparisons × repeats answers.
	Comparisons, Size int
	// Landmarks are the landmark items with their labels.
	Landmarks []ItemRef
	// Progress is the design's stored progress (Started only).
	Progress DesignProgress
	// Recorded is the number of answers the design accepted.
	Recorded int64
	// Answers counts the answers of the arm's participants (held-out ones
	// included), Fallbacks those to random fallback questions, Heldout
	// those to held-out questions; ActiveLeases the arm's comparisons out
	// on lease now.
	Answers, Fallbacks, Heldout, ActiveLeases int
	UpdatedAt                                 *time.Time
	// Problem says why the settings do not fit the study's items (empty
	// when they do or when that cannot be known yet).
	Problem string
}

// FallbackShare returns Fallbacks / Answers (0 without answers; held-out
// answers count in Answers).
func (s DesignStatus) FallbackShare() float64 {
	if s.Answers == 0 {
		return 0
	}
	return float64(s.Fallbacks) / float64(s.Answers)
}
