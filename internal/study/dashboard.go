package study

import "time"

// VoteCount is a comparison with its votes: JCloser said d(a,j) < d(a,k).
type VoteCount struct {
	Anchor, J, K     int
	JCloser, KCloser int
}

// ResponseBinMS is the width of the bins the dashboard's reads count
// response times in (bin b holds b·10 ms to b·10 + 9 ms); bins past a day
// are counted in the day's bin.
const ResponseBinMS = 10

// DashboardCounts are a study's answers and votes counted from scratch in
// one snapshot: the answers grouped in PostgreSQL (the page does not load
// them one by one) and the comparisons answered both ways most often.
type DashboardCounts struct {
	Seq     int64 // the watermark: the largest answers.seq counted (0: none)
	Answers int
	// First and Last are the earliest and latest answered_at (nil: none).
	First, Last *time.Time
	// Answers per Unix second of answered_at (rounded down), per response
	// time bin (ResponseBinMS; answers without a time left out) and per
	// participant id.
	Seconds, ResponseBins, People map[int64]int
	// Comparisons answered, and those answered both ways.
	Comparisons, Contradictions int
	// Contradicted are the most contradicted comparisons, at most the top
	// asked for: most votes on the weaker side first, then most votes, then
	// by anchor, j and k.
	Contradicted []VoteCount
	// Participants, and those who completed.
	Participants, Completed int
}

// DashboardAnswer is an answer read after a watermark.
type DashboardAnswer struct {
	Seq, Participant        int64
	Anchor, Closer, Farther int
	ResponseBin             *int64 // nil without a response time
	At                      time.Time
}

// DashboardDelta is what changed in a study after a watermark, read in one
// snapshot.
type DashboardDelta struct {
	// Counted is the number of answers up to the watermark now: not the
	// number counted before when an answer committed late with a sequence
	// number below the watermark (numbers are taken at insert, not at
	// commit) or answers were removed.
	Counted int
	// Participants and Completed are the current counts (not additive).
	Participants, Completed int
	// Answers are those after the watermark, in no particular order.
	Answers []DashboardAnswer
	// Votes are the current votes of the comparisons Answers answer.
	Votes []VoteCount
}

// DashboardParticipant is one row of the dashboard's participants table.
type DashboardParticipant struct {
	ID         int64
	PublicID   string
	ExternalID string
	// Answers counts every question the participant answered: triplets
	// (held-out ones too), catch and repeat trials and "can't decide",
	// as the study page's participants table does (ParticipantRow.Answered).
	Answers    int
	Arm        int    // their arm (0 in a study without arms)
	Code       string // their completion code ("" until they finish)
	ExcludedAt *time.Time
	// ExcludedReason is the rule that excluded them ("" when a researcher
	// did, or when they are not excluded).
	ExcludedReason string
	CreatedAt      time.Time
	TrialFigures
}

// DashboardVersion is a cheap fingerprint of what the dashboard's figures
// depend on (the last answer's time, the participants and who is
// excluded), read through indexes without scanning the answers, and the
// live figures that change with the clock alone.
type DashboardVersion struct {
	Key string
	// Structure leaves out the last answer's time: what the additive
	// tally of the answers cannot follow by itself (participants added,
	// excluded or included again).
	Structure    string
	Recent       int // answers in the last RecentWindow
	RecentWindow time.Duration
	Excluded     int
}
