package study

import "time"

// Study statuses.
const (
	StatusDraft  = "draft"
	StatusOpen   = "open"
	StatusPaused = "paused"
	StatusClosed = "closed"
)

// Statuses lists the statuses in their natural order.
var Statuses = []string{StatusDraft, StatusOpen, StatusPaused, StatusClosed}

// Study is one collection of items and the questions asked about them.
type Study struct {
	ID                      int64
	Slug                    string
	Title                   string
	Instructions            string // plain text or Markdown
	Debrief                 string // plain text or Markdown
	Consent                 string // Markdown a participant agrees to before starting; "": none
	QuestionsPerParticipant int
	Status                  string
	Design                  string
	Platform                Platform // how participants are recruited (platform.go)
	Quota                   Quota
	MinViewMS               int    // how long a question is shown before it takes an answer (ms)
	Layout                  string // where a question's anchor stands: LayoutAbove or LayoutBeside the options (layout.go)
	Format                  string // the questions' format: "triplet", "odd-one-out" or "rank:N:K" (format.go)
	// MixedKinds allows items of more than one kind (images and texts) in
	// the study; by default every item is of one kind (the store refuses
	// an item of another).
	MixedKinds bool
	// PlayToEnd asks that every sound of a question be played to its end
	// before the question takes an answer (issue 29): enforced by the
	// question page's script only, a rule for participants rather than a
	// check (a participant without JavaScript answers regardless).
	PlayToEnd bool
	// SoundMaxSeconds is the longest a sound item of the study may last
	// (DefaultSoundMaxSeconds, 1 to MaxSoundMaxSeconds): an upload's or a
	// bundle's sound over it is refused.
	SoundMaxSeconds int
	Exclusion       ExclusionRules
	Quality         QualityControl // catch and repeat trials, "can't decide" (quality.go)
	// ExcludeStudies are the studies whose participants (by external id)
	// this one refuses.
	ExcludeStudies []int64
	// Arms are the designs the study runs side by side (arms.go); empty:
	// one, Design. With arms, Design is the first arm's design.
	Arms []Arm
	// HeldoutShare is the share of every participant's questions held out
	// (DesignHeldout): random comparisons no design and no vote sees.
	HeldoutShare float64
	// Language is the tag of the language the participant pages speak
	// (internal/i18n's catalog; "en" by default), TextOverrides the
	// researcher's own texts for single catalog keys, in any language.
	Language      string
	TextOverrides map[string]string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// StudyInput is what a researcher sets on a study.
type StudyInput struct {
	Slug                    string
	Title                   string
	Instructions            string
	Debrief                 string
	Consent                 string
	QuestionsPerParticipant int
	Status                  string
	Design                  string
	DesignConfig            DesignConfig // the design's settings (design_config.go)
	Platform                Platform     // the recruiting platform's settings (platform.go)
	Quota                   Quota
	MinViewMS               int
	Layout                  string // LayoutAbove or LayoutBeside; "": LayoutAbove
	// Format is the questions' format (ParseStudyFormat; "": triplet),
	// frozen, like the design, once a question was issued.
	Format string
	// MixedKinds allows items of more than one kind (Study.MixedKinds).
	MixedKinds bool
	PlayToEnd  bool // Study.PlayToEnd
	// SoundMaxSeconds is Study.SoundMaxSeconds; 0 takes
	// DefaultSoundMaxSeconds.
	SoundMaxSeconds int
	Exclusion       ExclusionRules
	Quality         QualityControl
	ExcludeStudies  []int64
	// Arms, when set (2 to 8), replace Design and DesignConfig: the study
	// runs every arm, and Design and DesignConfig are stored as the first
	// arm's. Frozen, with the held-out share, once a question was issued.
	Arms []Arm
	// HeldoutShare is the share of questions held out (0 to 0.5).
	HeldoutShare float64
	// Language and TextOverrides: the participant pages' language and
	// the researcher's texts for single keys (CheckLanguage).
	Language      string
	TextOverrides map[string]string
}

// Quota limits how many take part in a study: once MaxParticipants (0: no
// limit) have completed or are in progress, no one new is admitted; a
// participant without activity (joining, answering) for IdleMinutes (0:
// never) is no longer in progress and leaves a place free. Their open
// question stays theirs to answer, but a design's lease on it lasts at most
// IdleMinutes (DesignScheduler.LeaseTTL otherwise): by the time they are
// idle the design may ask that comparison of someone else.
type Quota struct {
	MaxParticipants int
	IdleMinutes     int
}

// MaxStudyTextBytes bounds a study's instructions, debrief and consent
// text (Markdown, in bytes of UTF-8): pages render them, and the bound keeps
// a render within milliseconds (docs/security.md, "Markdown").
const MaxStudyTextBytes = 32 << 10

// StudySummary is a study with the counts the studies list shows.
type StudySummary struct {
	Study                        Study
	Items, Participants, Answers int
	// Full says that the study's participant limit is taken, so that it
	// turns newcomers away (set by the engine's MarkFull, not by the
	// store's list).
	Full bool
}

// Stats summarises a study's collection so far.
type Stats struct {
	Items          int
	Participants   int
	Completed      int
	Answers        int
	Comparisons    int // distinct (anchor, pair) keys answered
	Contradictions int // keys answered both ways
	// AnswersPerMinute is the rate over the last RateWindow.
	AnswersPerMinute float64
	RateWindow       time.Duration
	LastAnswer       *time.Time
}

// The bounds of a study's longest sound, in seconds (Study.SoundMaxSeconds).
const (
	DefaultSoundMaxSeconds = 30  // issue 29: "default at most 30 s"
	MaxSoundMaxSeconds     = 600 // ten minutes: a listening test, not a recording archive
)
