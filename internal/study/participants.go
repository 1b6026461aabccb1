package study

import "time"

// Participant is one annotator of one study. They prove who they are with a
// secret token (cookie or bearer); only its sha256 is stored.
type Participant struct {
	ID             int64
	PublicID       string
	StudyID        int64
	ExternalID     string // PROLIFIC_PID, workerId, ... when given
	CompletionCode string // set when they finish
	CreatedAt      time.Time
	CompletedAt    *time.Time
	// Arm is the arm of the study they were assigned to when they joined
	// (0 in a study without arms); it never changes.
	Arm int
	// Resumed is set by CreateParticipant when the external id had joined
	// the study before: the participant is that earlier one.
	Resumed bool
	// Preview marks a researcher's preview session (issue 26): it uses no
	// quota place, freezes nothing, is asked random questions that cast no
	// vote and reach no design, and is left out of results and exports
	// unless they ask for previews.
	Preview bool
}

// MaxExternalIDLen bounds the external id kept with a participant.
const MaxExternalIDLen = 200

// ParticipantRow is a participant with their progress, for the study page.
type ParticipantRow struct {
	Participant
	Answered   int
	LastAnswer *time.Time
	// PlatformParams are the platform's link parameters kept with them
	// (Prolific's STUDY_ID and SESSION_ID), or nil.
	PlatformParams map[string]string
	Excluded       bool   // their answers are left out
	ExcludedReason string // the rule that excluded them ("" when a researcher did)
	TrialFigures
}

// TrialFigures are a participant's quality-control figures.
type TrialFigures struct {
	// Skipped counts their "can't decide" answers.
	Skipped int
	// CatchTrials they answered (a skip counts), CatchCorrect of them
	// right; RepeatTrials they answered (skips do not count), RepeatSame of
	// them the same way as the first time.
	CatchTrials, CatchCorrect, RepeatTrials, RepeatSame int
}

// CatchAccuracy is the share of their catch trials answered right; nil
// without any.
func (f TrialFigures) CatchAccuracy() *float64 { return share(f.CatchCorrect, f.CatchTrials) }

// Consistency is the share of their repeat trials answered the same way as
// the first time; nil without any.
func (f TrialFigures) Consistency() *float64 { return share(f.RepeatSame, f.RepeatTrials) }

func share(k, n int) *float64 {
	if n == 0 {
		return nil
	}
	x := float64(k) / float64(n)
	return &x
}
