package study

import (
	"crypto/md5"
	"encoding/binary"
	"strconv"
)

// ExclusionRules exclude a participant automatically when they finish: one
// who answered faster than FastMS more often than MaxFastShare of the
// time, or chose the option on one side (left or right) more often than
// MaxSideShare of the time, or (studies with catch or repeat trials)
// chose the right option of fewer than MinCatchAccuracy of their catch
// trials (a skipped one counts as wrong) or the same option in fewer than
// MinConsistency of their repeat trials (skipped ones do not count). A zero
// share turns its rule off; a participant without such trials is never
// excluded by their rule. The excluded
// participant gets the study's screened-out code when it has one (on
// Prolific: the screened-out completion path); their answers stay stored
// but leave recompute and the default export, as for a participant the
// researcher excluded. Stored as studies.exclusion.
type ExclusionRules struct {
	FastMS       int     `json:"fast_ms,omitempty"`
	MaxFastShare float64 `json:"max_fast_share,omitempty"`
	MaxSideShare float64 `json:"max_side_share,omitempty"`
	// MinCatchAccuracy and MinConsistency are shares (0..1).
	MinCatchAccuracy float64 `json:"min_catch_accuracy,omitempty"`
	MinConsistency   float64 `json:"min_consistency,omitempty"`
}

// checkExclusionRules returns a user-facing error naming the first rule r
// breaks.
func CheckExclusionRules(r ExclusionRules) error {
	switch {
	case r.MaxFastShare < 0 || r.MaxFastShare >= 1:
		return Errorf(KindInvalid, "the share of very fast answers that excludes must be between 0%% (off) and 99%%")
	case r.MaxFastShare > 0 && (r.FastMS < 1 || r.FastMS > 60_000):
		return Errorf(KindInvalid, "a very fast answer must be faster than 1 to 60000 ms")
	case r.MaxFastShare == 0 && (r.FastMS < 0 || r.FastMS > 60_000):
		return Errorf(KindInvalid, "a very fast answer must be faster than 1 to 60000 ms")
	case r.MaxSideShare != 0 && (r.MaxSideShare <= 0.5 || r.MaxSideShare >= 1):
		return Errorf(KindInvalid, "the share of answers on one side that excludes must be above 50%% and below 100%% (or 0: off)")
	case r.MinCatchAccuracy < 0 || r.MinCatchAccuracy > 1:
		return Errorf(KindInvalid, "the catch-trial accuracy below which a participant is excluded must be between 0%% (off) and 100%%")
	case r.MinConsistency < 0 || r.MinConsistency > 1:
		return Errorf(KindInvalid, "the self-consistency below which a participant is excluded must be between 0%% (off) and 100%%")
	}
	return nil
}

// ExclusionSum fingerprints a set of excluded participants: how many, and
// a checksum of their ids (the sum, mod 2⁶⁰, of each id's hash: the first
// 60 bits of the MD5 of its decimal form). Two different sets have the
// same sum by a chance of about 2⁻⁶⁰; unlike a plain sum of ids,
// swapping participants 1 and 4 for 2 and 3 changes it. A recompute keeps
// the sum of the excluded participants whose answers it left out
// (recompute.Settings); the dashboard compares it with ExcludedWithAnswers.
type ExclusionSum struct {
	Participants int   `json:"participants"`
	Checksum     int64 `json:"checksum"`
}

// exclusionMod is the checksum's modulus, 2⁶⁰.
const exclusionMod = 1 << 60

// Add adds participant id (participants.id) to the sum; add each
// participant once.
func (e *ExclusionSum) Add(participantID int64) {
	h := md5.Sum([]byte(strconv.FormatInt(participantID, 10)))
	e.Participants++
	e.Checksum = int64((uint64(e.Checksum) + binary.BigEndian.Uint64(h[:8])>>4) % exclusionMod)
}
