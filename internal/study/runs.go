package study

import (
	"encoding/json"
	"time"
)

// RecomputeSettings are a study's dashboard settings: when the periodic
// scan recomputes it and what a run computes.
type RecomputeSettings struct {
	// MinNewAnswers: recompute once this many answers arrived since the
	// last run ...
	MinNewAnswers int
	// MaxAge: ... or once this much time passed since it, if any answer arrived.
	MaxAge time.Duration
	// Method and Dim are the embedding's (t-STE in 2-D by default).
	Method string
	Dim    int
	// Clusters is the kernel k-means k; 0 picks the best silhouette for 2..8.
	Clusters int
	// Trust bounds what a run computes to judge its embedding (issue 28).
	Trust TrustSettings
}

// TrustSettings bound the cost of a run's dimension choice, uncertainty
// and projection (analysis.TrustSettings). The embedding keeps Dim: the
// dimension choice only suggests one.
type TrustSettings struct {
	// MaxDim is the largest dimension the dimension choice tries, by
	// Folds-fold cross-validation (MaxDim·Folds fits; 0 folds: 5); 0
	// turns it off.
	MaxDim int
	Folds  int
	// Bootstrap is the number of bootstrap replicates of the embedding;
	// 0 turns the uncertainty off.
	Bootstrap int
	// Project fits the learning curve and projects the answers needed
	// for TargetError (0: automatic, halfway to the curve's asymptote).
	Project     bool
	TargetError float64
}

// DefaultTrustSettings: d = 1..5 by 5-fold cross-validation, 100
// bootstrap replicates and the projection, which together keep a run of
// 300 items and 15,000 answers within 30 s on a shared 2-core machine
// (docs/benchmarks.md, "Recompute with dimension choice, uncertainty and
// projection").
func DefaultTrustSettings() TrustSettings {
	return TrustSettings{MaxDim: 5, Folds: 5, Bootstrap: 100, Project: true}
}

// DefaultRecomputeSettings are used for a study that never set its own.
func DefaultRecomputeSettings() RecomputeSettings {
	return RecomputeSettings{MinNewAnswers: 200, MaxAge: 10 * time.Minute, Method: "tste", Dim: 2, Trust: DefaultTrustSettings()}
}

// Run is one recompute run of a study.
type Run struct {
	ID           int64
	StudyID      int64
	JobID        int64
	Status       string // running, done, failed, cancelled
	Stage        string
	StartedAt    time.Time
	FinishedAt   *time.Time
	Duration     time.Duration
	Answers      int
	Items        int
	Settings     json.RawMessage
	TrainError   *float64
	HeldoutError *float64
	// HeldoutAnswers is the number of held-out answers HeldoutError was
	// measured on (nil: none, or a run stored before it was kept), for
	// the interval of the dashboard's learning curve.
	HeldoutAnswers *int
	Error          string
}

// Run statuses.
const (
	RunRunning   = "running"
	RunDone      = "done"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// RunOutcome is how a run ended.
type RunOutcome struct {
	Status       string // done, failed or cancelled
	Duration     time.Duration
	TrainError   *float64
	HeldoutError *float64
	// HeldoutAnswers is the number of held-out answers HeldoutError was
	// measured on (0: none).
	HeldoutAnswers int
	Error          string
	Result         []byte // the encoded results (done runs)
}

// RunAnswer is one answer as a recompute run reads it.
type RunAnswer struct {
	QuestionID  string
	Participant int64 // participants.id
	PublicID    string
	Excluded    bool
	Anchor      int
	Closer      int
	Farther     int
	ResponseMS  int // -1 when unknown
	AnsweredAt  time.Time
	ChoseLeft   bool // the closer item was shown on the left
	// Design is the question's design: the arm's design, DesignFallback,
	// DesignHeldout (a held-out answer: keep it out of every fit, it is
	// the study's test set), "import", ...
	Design string
	// Arm is the participant's arm (0 in a study without arms).
	Arm int
	// Options and Choices are an odd-one-out or rank trial's items shown
	// and chosen (nil for a triplet): every triplet the trial derives
	// carries them, with the trial's QuestionID, so that a run can score
	// the trial in its own format.
	Options, Choices []int
}
