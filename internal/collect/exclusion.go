package collect

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"strconv"
)

// setExcludedSQL excludes a participant or includes them again (by name so
// that TestHotQueryPlans explains this very string on a large study).
const setExcludedSQL = `
	UPDATE participants SET excluded_at = CASE WHEN $3 THEN coalesce(excluded_at, now()) END
	WHERE study_id = $1 AND public_id = $2`

// SetExcluded excludes a participant of the study (or includes them again).
// Their answers are kept; recompute runs leave them out, and so do exports
// unless asked to include them.
func (s *Store) SetExcluded(ctx context.Context, studyID int64, publicID string, excluded bool) error {
	tag, err := s.pool.Exec(ctx, setExcludedSQL, studyID, publicID, excluded)
	if err != nil {
		return fmt.Errorf("set excluded: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set excluded: %w", notFound("participant"))
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

// excludedWithAnswersSQL sums the study's excluded participants who have
// answers as ExclusionSum.Add does: 'x' and the first 15 hex digits of the
// MD5 read as 60 bits (by name so that TestHotQueryPlans explains it). It
// reads the study's participants by study (participants_study), as
// dashboardVersionSQL does, and probes each excluded one's answers by
// participant (answers_participant).
const excludedWithAnswersSQL = `
	SELECT count(*), coalesce(sum(('x' || left(md5(p.id::text), 15))::bit(60)::bigint) % 1152921504606846976, 0)::bigint
	FROM participants p
	WHERE p.study_id = $1 AND p.excluded_at IS NOT NULL
		AND EXISTS (SELECT FROM answers a WHERE a.participant_id = p.id AND a.study_id = $1)`

// ExcludedWithAnswers returns the ExclusionSum of the study's participants
// who are excluded now and have answers: those whose answers a recompute
// run now would leave out as excluded.
func (s *Store) ExcludedWithAnswers(ctx context.Context, studyID int64) (ExclusionSum, error) {
	var e ExclusionSum
	if err := s.pool.QueryRow(ctx, excludedWithAnswersSQL, studyID).Scan(&e.Participants, &e.Checksum); err != nil {
		return ExclusionSum{}, fmt.Errorf("excluded with answers: %w", err)
	}
	return e, nil
}
